// What the symmetric kernels (kernels/engine/symmetric.h) cost, and which all_reduce kernel a
// call of some size runs: one-shot for small messages, two-shot above, as NCCL's symmetric
// kernels choose. Pure arithmetic, no I/O.
//
// A kernel's time is its latency (the two barriers that begin and end every call, and the
// two-shot's stores into every peer) plus the bytes each rank moves over the links, at the
// bandwidth of the blocks that move them, capped by the peak of the links:
//
//   time = base + busBytes / min(blocks * blockBw, peakBw)
//
//   all_reduce one-shot   busBytes = (n - 1) * bytes          (loads every peer's whole input)
//   all_reduce two-shot   busBytes = 2 * (n - 1) / n * bytes  (loads its share of every peer's,
//                                                              stores it into every peer)
//   reduce_scatter        busBytes = (n - 1) * bytes          (its block of every peer's input)
//   all_gather            busBytes = (n - 1) * bytes          (every peer's input)
//
// with `bytes` the output of all_reduce and reduce_scatter and the input of all_gather. The
// one-shot moves (n - 1) / 2 times as many bytes, the two-shot pays its stores' latency: the
// two-shot wins from n = 3 above a size that shrinks as n grows, never at n = 2. NCCL models its
// kernels the same way (sym_kernels.cc: a base latency, bus bytes, a per-block bandwidth capped
// by a peak); the figures below are of that order, PROVISIONAL until measured on hardware.
#pragma once

#include <cstddef>
#include <cstdint>

#include "braid/types.h"

namespace braid::tune {

enum class SymmetricAlgorithm : uint8_t { kOneShot, kTwoShot };

/// "oneshot", "twoshot"
const char* symmetricAlgorithmName(SymmetricAlgorithm algorithm);

struct SymmetricEstimate {
  SymmetricAlgorithm algorithm = SymmetricAlgorithm::kOneShot;  ///< all_reduce's kernel
  uint32_t blocks = 1;
  double us = 0;
};

/// Bytes a block of a symmetric kernel takes before the call gets another block.
inline constexpr size_t kSymmetricBytesPerBlock = 64 * 1024;

/// The blocks a symmetric call of `bytes` (as symmetricCost takes them) runs on, at most
/// `maxBlocks`.
uint32_t symmetricBlocks(size_t bytes, uint32_t maxBlocks);

/// The time of `collective` (all_reduce, all_gather or reduce_scatter) of `bytes` on `nranks`
/// ranks run by `algorithm`'s kernel (all_reduce; the others have one) on `blocks` blocks.
double symmetricCost(Collective collective, SymmetricAlgorithm algorithm, size_t bytes, int nranks,
                     uint32_t blocks);

/// The faster all_reduce kernel for `bytes` (the one-shot on a tie), or the only kernel of the
/// other collectives, with its blocks (at most `maxBlocks`) and time.
SymmetricEstimate chooseSymmetric(Collective collective, size_t bytes, int nranks,
                                  uint32_t maxBlocks);

}  // namespace braid::tune
