// Symmetric (GPU communicators): an all_reduce, all_gather or reduce_scatter whose two buffers
// lie in symmetric windows (NCCL_WIN_COLL_SYMMETRIC) of a communicator whose ranks are all on
// this host runs a symmetric kernel (kernels/engine/symmetric.h), which loads and stores the
// peers' windows directly, where the cost model (tune/symmetric_cost.h) says it is faster than
// the selector's choice, or always under BRAID_SYMMETRIC=2. The windows come from the lookup
// Calls holds (Comm::setWindowLookup: the window registry's). Every rank decides alike: the
// windows are registered together, and the model's figures are the same on every rank.
#include <algorithm>
#include <optional>

#include "comm/gpu_side.h"
#include "comm/gpu_symmetric.h"
#include "comm/ways/ways.h"
#include "nccl_device/window_layout.h"
#include "tune/symmetric_cost.h"

namespace braid::comm {
namespace {

namespace engine = kernels::engine;

/// NCCL_WIN_COLL_SYMMETRIC (include/nccl.h): the window is registered alike on every rank.
constexpr int kWinCollSymmetric = 0x01;

class GpuSymmetricWay : public Way {
 public:
  GpuSymmetricWay(const WayParts& parts, const WindowLookup& windows)
      : parts_(parts), windows_(windows) {}

  Outcome run(WayCall& wc) override {
    const CollectiveCall& call = wc.call;
    const int n = parts_.members.nranks;
    if (parts_.config.symmetric == 0 || !windows_ || !takesCollective(call) || n < 2 ||
        n > static_cast<int>(engine::kMaxSymmetricRanks) ||
        parts_.members.hostBlock().second != n) {
      return Outcome::declined();
    }
    const size_t elem = dataTypeSize(call.type);
    const size_t all = call.count * static_cast<size_t>(n) * elem;
    const size_t inBytes = call.collective == Collective::kReduceScatter ? all : call.count * elem;
    const size_t outBytes = call.collective == Collective::kAllGather ? all : call.count * elem;
    const std::optional<WindowedBuffer> send = windows_(call.input, inBytes);
    if (!send || !symmetricWindow(*send)) return Outcome::declined();
    const std::optional<WindowedBuffer> recv = windows_(call.output, outBytes);
    if (!recv || !symmetricWindow(*recv)) return Outcome::declined();

    const tune::Choice& choice = *wc.choice;
    uint32_t maxBlocks = std::min<uint32_t>(engine::kMaxSymmetricBlocks,
                                            static_cast<uint32_t>(parts_.links.nchannels()));
    if (choice.nchannels > 0) maxBlocks = std::min<uint32_t>(maxBlocks, choice.nchannels);
    const size_t modelBytes = call.collective == Collective::kAllGather ? inBytes : outBytes;
    const tune::SymmetricEstimate estimate =
        tune::chooseSymmetric(call.collective, modelBytes, n, maxBlocks);
    // Auto: where the model says faster, and not where a tuner plugin decided the choice.
    if (parts_.config.symmetric == 1 &&
        (choice.pluginDecided || estimate.us >= choice.predictedUs)) {
      return Outcome::declined();
    }
    const std::string& forced = parts_.config.symmetricAlgo;
    const bool twoShot = forced.empty() ? estimate.algorithm == tune::SymmetricAlgorithm::kTwoShot
                                        : forced == "twoshot";
    const SymmetricPlan plan{symmetricKindFor(call, twoShot), estimate.blocks};
    wc.record.plan(choice, nullptr);
    Outcome done = Outcome::ranIt(
        runSymmetric(*parts_.gpu, call, wc.spec, *send, *recv, plan, n, parts_.members.rank), false,
        nameOf(plan.kind));
    done.channels = plan.blocks;
    return done;
  }

 private:
  static bool takesCollective(const CollectiveCall& call) {
    return (call.collective == Collective::kAllReduce ||
            call.collective == Collective::kAllGather ||
            call.collective == Collective::kReduceScatter) &&
           !call.variableCounts && call.blockCounts == nullptr;
  }

  /// Whether `span`'s window is symmetric and spans the communicator's ranks as they are.
  bool symmetricWindow(const WindowedBuffer& span) const {
    const ncclWindow_vidmem* w = span.window;
    return w != nullptr && w->magic == BRAID_WINDOW_MAGIC &&
           (w->winFlags & kWinCollSymmetric) != 0 && w->lsaSize == parts_.members.nranks &&
           w->lsaRank == parts_.members.rank && w->lsaBases != nullptr;
  }

  static const char* nameOf(engine::SymmetricKind kind) {
    switch (kind) {
      case engine::SymmetricKind::kAllReduceOneShot:
        return "symmetric one-shot";
      case engine::SymmetricKind::kAllReduceTwoShot:
        return "symmetric two-shot";
      default:
        return "symmetric";
    }
  }

  WayParts parts_;
  const WindowLookup& windows_;
};

}  // namespace

std::unique_ptr<Way> makeGpuSymmetricWay(const WayParts& parts, const WindowLookup& windows) {
  return std::make_unique<GpuSymmetricWay>(parts, windows);
}

}  // namespace braid::comm
