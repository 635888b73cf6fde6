// The symmetric kernels' cost model (symmetric_cost.h).
#include "tune/symmetric_cost.h"

#include <algorithm>

namespace braid::tune {
namespace {

/// A barrier of the ranks' blocks through peer memory: a store into every peer, a poll of
/// every peer's word. PROVISIONAL.
constexpr double kBarrierUs = 2.0;
/// The two-shot's stores into every peer's output, landed before its closing barrier.
constexpr double kStoreRoundUs = 1.0;
/// Bytes per microsecond one block moves to or from peer memory (NCCL's figure for Hopper's
/// symmetric kernels is of this order: 44 GB/s a block). PROVISIONAL.
constexpr double kBlockBytesPerUs = 44e3;
/// Bytes per microsecond of the links at most (NVLink 4 on one GPU: ~320 GB/s). PROVISIONAL.
constexpr double kPeakBytesPerUs = 320e3;

}  // namespace

const char* symmetricAlgorithmName(SymmetricAlgorithm algorithm) {
  return algorithm == SymmetricAlgorithm::kTwoShot ? "twoshot" : "oneshot";
}

uint32_t symmetricBlocks(size_t bytes, uint32_t maxBlocks) {
  const size_t wanted = (bytes + kSymmetricBytesPerBlock - 1) / kSymmetricBytesPerBlock;
  return static_cast<uint32_t>(
      std::max<size_t>(1, std::min<size_t>(wanted, std::max<uint32_t>(maxBlocks, 1))));
}

double symmetricCost(Collective collective, SymmetricAlgorithm algorithm, size_t bytes, int nranks,
                     uint32_t blocks) {
  const double n = nranks;
  const double b = static_cast<double>(bytes);
  double base = 2 * kBarrierUs;
  double busBytes = (n - 1) * b;
  if (collective == Collective::kAllReduce && algorithm == SymmetricAlgorithm::kTwoShot) {
    base += kStoreRoundUs;
    busBytes = 2 * (n - 1) / n * b;
  }
  const double bw = std::min(blocks * kBlockBytesPerUs, kPeakBytesPerUs);
  return base + busBytes / bw;
}

SymmetricEstimate chooseSymmetric(Collective collective, size_t bytes, int nranks,
                                  uint32_t maxBlocks) {
  SymmetricEstimate e;
  e.blocks = symmetricBlocks(bytes, maxBlocks);
  e.us = symmetricCost(collective, SymmetricAlgorithm::kOneShot, bytes, nranks, e.blocks);
  if (collective == Collective::kAllReduce) {
    const double twoShot =
        symmetricCost(collective, SymmetricAlgorithm::kTwoShot, bytes, nranks, e.blocks);
    if (twoShot < e.us) {
      e.algorithm = SymmetricAlgorithm::kTwoShot;
      e.us = twoShot;
    }
  }
  return e;
}

}  // namespace braid::tune
