// The tiny lane (calls.h): a host all_reduce of the shape the last one-shot call had runs
// straight on the one-shot board, without choosing its way again.
//
// Why a lane: two ranks that all_reduce a few bytes in a loop move two cache lines a call, and
// the time of a call is the time a line takes to cross plus the work a rank does between seeing
// its peer's input and publishing its next one. All of that work is on the critical path, so
// the lane leaves out what the first call of a shape settled for good (the operator, the
// choice, that zero-copy declines it) and records the call while its input travels rather than
// before it sets out. What protects a call stays: the communicator's health is checked, the
// flight recorder holds the call before anything waits, the wait has its deadline and abort
// flag, and a failure is explained and kept as any call's.
#include <string>

#include "base/log.h"
#include "comm/calls.h"

namespace braid::comm {

void Calls::armTinyLane(const CollCall& call, const tune::Choice& choice,
                        const kernels::HostOp& op) {
  // Only what makes every call of the shape take the same way on every rank: a premulsum's
  // scalar may change between calls, BRAID_CHECK_CALLS meets the peers first, a trace or a
  // schedule dump wants each call, and where zero-copy might take the call the ranks decide
  // it together.
  const bool same = call.collective == Collective::kAllReduce && call.blockCounts == nullptr &&
                    static_cast<int>(call.op) < kFirstUserOp && !config_.checkCalls &&
                    !config_.dumpSchedule && !recorder_.trace && !zeroCopyFits(call, op);
  if (!same) return;
  tiny_.armed = true;
  tiny_.count = call.count;
  tiny_.type = call.type;
  tiny_.op = call.op;
  tiny_.choice = choice;
  tiny_.hostOp = op;
}

Status Calls::runTiny(const CollCall& call) {
  BRAID_TRY(checkUsable());
  exec::OneShotBoard& board = *links_.oneShot;
  const size_t elemBytes = dataTypeSize(call.type);
  const algo::Protocol protocol = tiny_.choice.protocol;
  Status s = board.begin(call.input, call.output, call.count, elemBytes, tiny_.hostOp, protocol);
  // The input is on its way: the record is written now, before the wait.
  recorder_.begin(call);
  recorder_.plan(tiny_.choice, nullptr, "one-shot (tiny lane)");
  if (s.ok()) {
    s = board.complete(call.input, call.output, call.count, elemBytes, tiny_.hostOp, protocol,
                       links_.waitContext(), recorder_.flight->hostWaits());
  }
  if (s.ok()) {
    tiny_.hostOp.finishOutput(call.output, call.count);  // avg's division
  } else {
    s = failed(call, tiny_.choice, s);
    tiny_ = TinyLane();
  }
  recorder_.end(s);
  if (!s.ok()) recorder_.noteFailure(s, describeCall(call));
  return s;
}

}  // namespace braid::comm
