// How many bytes the engine's loops (elementwise.h) wrote through 16-byte packs and how many
// element by element, counted where the engine runs on the CPU (the emulated GPU), so that a
// test can show what a real GPU would do with a call: whether its channel, chunk and slice
// bounds leave the packs the whole work, or send part of it down the slow per-element path.
// The CUDA kernel counts nothing (a counter in its hot loop would cost bandwidth).
#pragma once

#include <cstdint>

namespace braid::kernels::engine {

/// Bytes written by the loops since the process started or the last resetLoopBytes.
struct LoopBytes {
  uint64_t packed = 0;    ///< stored as whole 16-byte packs
  uint64_t unpacked = 0;  ///< stored element by element or as words narrower than a pack
};

#if !defined(__CUDA_ARCH__)
/// Adds one loop's bytes (a thread's share of it) to the process's counts.
void noteLoopBytes(uint64_t packed, uint64_t unpacked);
LoopBytes loopBytes();
void resetLoopBytes();
#endif

}  // namespace braid::kernels::engine
