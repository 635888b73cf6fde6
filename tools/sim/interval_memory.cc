#include "interval_memory.h"

#include <algorithm>
#include <iterator>

namespace braid::sim {

void IntervalMemory::reset(uint64_t len, const Piece& fill) {
  map_.clear();
  len_ = len;
  if (len > 0) map_.emplace(0, Piece{len, fill.src, fill.who});
}

void IntervalMemory::read(uint64_t pos, uint64_t n, Value& out) const {
  if (n == 0) return;
  auto it = std::prev(map_.upper_bound(pos));
  while (n > 0) {
    const uint64_t offset = pos - it->first;
    const uint64_t take = std::min(n, it->second.len - offset);
    appendPiece(out, Piece{take, it->second.src + offset, it->second.who});
    pos += take;
    n -= take;
    ++it;
  }
}

IntervalMemory::Map::iterator IntervalMemory::splitAt(uint64_t pos) {
  if (pos >= len_) return map_.end();
  auto it = std::prev(map_.upper_bound(pos));
  if (it->first == pos) return it;
  const uint64_t offset = pos - it->first;
  Piece right{it->second.len - offset, it->second.src + offset, it->second.who};
  it->second.len = offset;
  return map_.emplace_hint(std::next(it), pos, right);
}

void IntervalMemory::mergeAround(Map::iterator it) {
  if (it != map_.begin()) {
    auto prev = std::prev(it);
    if (continues(prev->second, it->second)) {
      prev->second.len += it->second.len;
      map_.erase(it);
      it = prev;
    }
  }
  auto next = std::next(it);
  if (next != map_.end() && continues(it->second, next->second)) {
    it->second.len += next->second.len;
    map_.erase(next);
  }
}

// The common writes (a slice next to what the previous slice wrote, a chunk
// next to the previous chunk) move an interval boundary without allocating:
// only a write into the middle of an interval splits it.
void IntervalMemory::writePiece(uint64_t pos, const Piece& piece) {
  const uint64_t end = pos + piece.len;
  auto host = std::prev(map_.upper_bound(pos));
  const uint64_t hostStart = host->first;
  const uint64_t hostEnd = hostStart + host->second.len;
  if (hostStart == pos && hostEnd == end) {
    host->second = piece;
    mergeAround(host);
    return;
  }
  if (end <= hostEnd) {
    if (hostStart == pos && host != map_.begin()) {
      auto prev = std::prev(host);
      if (continues(prev->second, piece)) {
        prev->second.len += piece.len;
        auto node = map_.extract(host);
        node.key() = end;
        node.mapped().src += piece.len;
        node.mapped().len -= piece.len;
        map_.insert(std::move(node));
        return;
      }
    }
    auto next = std::next(host);
    if (end == hostEnd && next != map_.end() && continues(piece, next->second)) {
      host->second.len -= piece.len;
      auto node = map_.extract(next);
      node.key() = pos;
      node.mapped().src = piece.src;
      node.mapped().len += piece.len;
      map_.insert(std::move(node));
      return;
    }
  }
  auto first = splitAt(pos);
  auto last = splitAt(end);
  map_.erase(first, last);
  mergeAround(map_.emplace(pos, piece).first);
}

void IntervalMemory::write(uint64_t pos, const Value& value) {
  for (const Piece& piece : value) {
    writePiece(pos, piece);
    pos += piece.len;
  }
}

}  // namespace braid::sim
