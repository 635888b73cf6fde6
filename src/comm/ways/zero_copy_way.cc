// Zero-copy (exec/zero_copy.h): each rank reads its block of every peer's input in place, or
// writes its own into every peer's output, with no FIFO between them.
//
// It takes a large all_reduce or all_gather (of equal blocks) when braid chooses the algorithm
// (BRAID_ALGO / NCCL_ALGO unset: a forced ring or tree runs as forced), the ranks can reach
// each other's memory, and its result has the bits the FIFO path's would: an all_gather only
// copies. Not reduce_scatter, though the board runs it: its ring moves no more memory than
// zero-copy does (the FIFO slots stay in the caches), and it measured faster here (braid-perf
// -R 1, 2 ranks, 64 MiB: in place 7.2-7.4 GB/s busbw on the FIFOs against 4.9-5.6 zero-copy;
// out of place 5.2 against 4.8-5.6), where all_gather's zero-copy doubles (6.1-6.7 against
// 4.0-4.9; in place 11.1-13.4 against 6.8-7.9).
//
// The ranks decide together on the board whether all can take the call (the buffers, the
// board), and those that cannot decline together: the next way then runs it. The board applies
// avg's division itself.
#include "comm/ways/ways.h"
#include "exec/zero_copy.h"

namespace braid::comm {

bool zeroCopyFits(const WayParts& parts, const CollectiveCall& call, const kernels::HostOp& op) {
  const exec::ZeroCopyBoard* board = parts.links.zeroCopy();
  if (board == nullptr || !board->usable() || !parts.config.algo.empty()) return false;
  const size_t n = static_cast<size_t>(parts.members.nranks);
  const size_t elemBytes = dataTypeSize(call.type);
  const size_t minBytes = static_cast<size_t>(parts.config.zeroCopyMinBytes);
  switch (call.collective) {
    case Collective::kAllReduce:
      return call.count * elemBytes >= minBytes &&
             exec::zeroCopyKeepsResult(call.type, call.op, op, parts.members.nranks,
                                       parts.config.deterministic);
    case Collective::kAllGather:
      return call.blockCounts == nullptr && call.count * elemBytes * n >= minBytes;
    default:
      return false;
  }
}

namespace {

class ZeroCopyWay : public Way {
 public:
  explicit ZeroCopyWay(const WayParts& parts) : parts_(parts) {}

  Outcome run(WayCall& wc) override {
    const CollectiveCall& call = wc.call;
    // A tuner plugin's answer runs as it says, as a forced BRAID_ALGO does.
    if (wc.choice && wc.choice->pluginDecided) return Outcome::declined();
    if (!zeroCopyFits(parts_, call, wc.hostOp)) return Outcome::declined();
    wc.record.flush();  // the board meets the peers before the plan is known
    exec::ZeroCopyBoard& board = *parts_.links.zeroCopy();
    const transport::WaitContext wait = parts_.links.waitContext();
    exec::ZeroCopyMode mode = exec::ZeroCopyMode::kDeclined;
    Status s = call.collective == Collective::kAllReduce
                   ? board.allReduce(call.input, call.output, call.count, call.type, wc.hostOp,
                                     wait, &mode)
                   : board.allGather(call.input, call.output, call.count, call.type, wait, &mode);
    if (mode == exec::ZeroCopyMode::kDeclined) {
      // Declined on every rank, or failed before the ranks decided: a failure ends the call.
      return s.ok() ? Outcome::declined() : Outcome::ranIt(std::move(s));
    }
    wc.record.plan(*wc.choice, nullptr, "zero-copy");
    parts_.recorder.dumpPlan(call, *wc.choice, nullptr,
                             mode == exec::ZeroCopyMode::kMapped
                                 ? "zero-copy (mapped)"
                                 : "zero-copy (cross-memory copies)",
                             "each rank reads its block of every peer's input in place, or "
                             "writes its own into every peer's output");
    return Outcome::ranIt(std::move(s), false, "zero-copy");
  }

 private:
  WayParts parts_;
};

}  // namespace

std::unique_ptr<Way> makeZeroCopyWay(const WayParts& parts) {
  return std::make_unique<ZeroCopyWay>(parts);
}

}  // namespace braid::comm
