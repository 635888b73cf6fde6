// One-shot (exec/one_shot.h): every rank puts its input on a shared board and reads every
// peer's from it, for the small all_reduces the selector gives it. A call that ran arms the
// tiny lane (tiny_lane.h) for the next call of its shape, where every such call would take this
// way on every rank: not a premulsum (its scalar may change between calls), not under
// BRAID_CHECK_CALLS (which meets the peers first), a trace or a schedule dump (which want each
// call), nor where zero-copy might take the call (the ranks decide that together).
#include "comm/ways/ways.h"
#include "exec/one_shot.h"

namespace braid::comm {
namespace {

class OneShotWay : public Way {
 public:
  OneShotWay(const WayParts& parts, TinyLane& tiny) : parts_(parts), tiny_(tiny) {}

  Outcome run(WayCall& wc) override {
    const tune::Choice& choice = *wc.choice;
    if (choice.algorithm != algo::Algorithm::kOneShot) return Outcome::declined();
    const CollectiveCall& call = wc.call;
    wc.record.plan(choice, nullptr);
    parts_.recorder.dumpPlan(
        call, choice, nullptr,
        choice.protocol == algo::Protocol::kLl ? "one-shot ll" : "one-shot simple",
        "every rank reads every peer's input from the shared board");
    Status s = parts_.links.oneShot()->allReduce(
        call.input, call.output, call.count, dataTypeSize(call.type), wc.hostOp, choice.protocol,
        parts_.links.waitContext(), parts_.recorder.hostWaits());
    // The lane skips the selector: not where a tuner plugin is to be asked about every call.
    if (s.ok() && !choice.pluginAsked && laneTakesNext(call, wc.hostOp)) {
      tiny_.arm(call, choice, wc.hostOp);
    }
    return Outcome::ranIt(std::move(s), true);
  }

 private:
  bool laneTakesNext(const CollectiveCall& call, const kernels::HostOp& op) const {
    return call.collective == Collective::kAllReduce && call.blockCounts == nullptr &&
           static_cast<int>(call.op) < kFirstUserOp && !parts_.config.checkCalls &&
           !parts_.config.dumpSchedule && !parts_.recorder.trace() &&
           !zeroCopyFits(parts_, call, op);
  }

  WayParts parts_;
  TinyLane& tiny_;
};

}  // namespace

std::unique_ptr<Way> makeOneShotWay(const WayParts& parts, TinyLane& tiny) {
  return std::make_unique<OneShotWay>(parts, tiny);
}

}  // namespace braid::comm
