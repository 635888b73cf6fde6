// The counts of kernels/engine/loop_meter.h: process-wide, relaxed (a test reads them once the
// launches it measures have finished, which orders every add before its read).
#include "kernels/engine/loop_meter.h"

#include <atomic>

namespace braid::kernels::engine {
namespace {

std::atomic<uint64_t> packedBytes{0};
std::atomic<uint64_t> unpackedBytes{0};

}  // namespace

void noteLoopBytes(uint64_t packed, uint64_t unpacked) {
  if (packed != 0) packedBytes.fetch_add(packed, std::memory_order_relaxed);
  if (unpacked != 0) unpackedBytes.fetch_add(unpacked, std::memory_order_relaxed);
}

LoopBytes loopBytes() {
  LoopBytes b;
  b.packed = packedBytes.load(std::memory_order_relaxed);
  b.unpacked = unpackedBytes.load(std::memory_order_relaxed);
  return b;
}

void resetLoopBytes() {
  packedBytes.store(0, std::memory_order_relaxed);
  unpackedBytes.store(0, std::memory_order_relaxed);
}

}  // namespace braid::kernels::engine
