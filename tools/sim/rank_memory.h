// A rank's buffers for the symbolic checker, and what they must hold at the
// end of each collective.
//
// Out of place, the input is never written, so it is not stored: element i
// of rank r's input is computed when read (element i of {r}), and only the
// output is an IntervalMemory, unwritten at first. In place, input and
// output are windows of one memory, overlapping as NCCL's aliasing rules
// say (reduce-scatter's output is block `rank` of its input, all-gather's
// input block `rank` of its output), so a step that reads input after
// another step overwrote it through the alias reads the overwritten value.
#pragma once

#include <cstdint>
#include <optional>

#include "braid/types.h"
#include "interval_memory.h"
#include "symbolic_value.h"

namespace braid::sim {

struct BufferLayout {
  bool inPlace = false;
  uint64_t inBase = 0;  ///< in the memory (in place only)
  uint64_t inLen = 0;
  uint64_t outBase = 0;  ///< in the memory (0 out of place)
  uint64_t outLen = 0;
  uint64_t memLen = 0;  ///< what the memory holds: the output, or the union in place
};

/// Input and output apart: an out-of-place call.
BufferLayout separateBuffers(uint64_t inLen, uint64_t outLen);
/// Input and output as windows of one memory of `memLen` elements, from
/// inBase and outBase on: an in-place call, whatever its aliasing rule.
BufferLayout oneBuffer(uint64_t memLen, uint64_t inBase, uint64_t inLen, uint64_t outBase,
                       uint64_t outLen);
/// Whether the windows of `layout` lie inside its memory.
bool fitsItsMemory(const BufferLayout& layout);

/// The buffers of `rank` in a collective of `count` elements per rank (per
/// block for reduce-scatter and all-gather), as NCCL sizes them.
BufferLayout layoutOf(Collective collective, int nranks, int rank, uint64_t count, bool inPlace);

class RankMemory {
 public:
  RankMemory() = default;
  RankMemory(const BufferLayout& layout, int rank, const RankKeys& keys);

  const BufferLayout& layout() const { return layout_; }
  /// Appends input elements [offset, offset + n) to `out` (must lie inside).
  void readInput(uint64_t offset, uint64_t n, Value& out) const;
  void readOutput(uint64_t offset, uint64_t n, Value& out) const;
  void writeOutput(uint64_t offset, const Value& value);
  /// Intervals the memory holds now.
  size_t intervals() const { return memory_.intervals(); }

 private:
  BufferLayout layout_;
  Contributions own_;
  IntervalMemory memory_;
};

/// What `rank`'s output must hold at the end: all-reduce every
/// contribution, reduce-scatter every contribution to block `rank`,
/// all-gather block b from rank b, broadcast the root's input, reduce every
/// contribution at the root. Nothing for reduce's other ranks, whose receive
/// buffer NCCL leaves undefined (braid's tree keeps partial results there).
std::optional<Value> expectedOutput(Collective collective, int nranks, int root, int rank,
                                    uint64_t count, const RankKeys& keys);

}  // namespace braid::sim
