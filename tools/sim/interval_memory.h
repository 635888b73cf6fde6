// One rank's buffer as the symbolic checker sees it: intervals of positions,
// each a Piece. A ring all-reduce writes its output chunk by chunk with
// pieces that continue each other, so the intervals merge as they are
// written and a rank's whole output ends as one interval, whatever its size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "symbolic_value.h"

namespace braid::sim {

class IntervalMemory {
 public:
  /// `len` positions, all holding `fill` (fill.len is ignored).
  void reset(uint64_t len, const Piece& fill);
  uint64_t size() const { return len_; }
  /// Appends the value of [pos, pos + n) to `out`; the range must lie inside.
  void read(uint64_t pos, uint64_t n, Value& out) const;
  /// Writes `value` (covering value's total length) from `pos` on.
  void write(uint64_t pos, const Value& value);
  /// Intervals held now (for tests and statistics).
  size_t intervals() const { return map_.size(); }

 private:
  using Map = std::map<uint64_t, Piece>;  // key: first position of the piece
  /// Makes `pos` the start of an interval (splitting the one that holds it).
  Map::iterator splitAt(uint64_t pos);
  /// Merges the interval at `it` with its neighbours where they continue each other.
  void mergeAround(Map::iterator it);
  void writePiece(uint64_t pos, const Piece& piece);

  Map map_;
  uint64_t len_ = 0;
};

}  // namespace braid::sim
