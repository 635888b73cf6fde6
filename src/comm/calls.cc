// Calls (calls.h): the dispatcher, from a call's check to its settling.
#include "comm/calls.h"

#include <algorithm>
#include <string>
#include <utility>

#include "base/log.h"
#include "comm/call_events.h"
#include "comm/gpu_side.h"

namespace braid::comm {
namespace {

// A call with nothing to move: a variable-count call moves other ranks' blocks even when its
// own is empty, so it has nothing to do only when every block is.
bool empty(const CollectiveCall& call, int nranks) {
  return call.blockCounts == nullptr ? call.count == 0
                                     : std::all_of(call.blockCounts, call.blockCounts + nranks,
                                                   [](size_t c) { return c == 0; });
}

// "send/recv: send to rank 1 (64 B) receive from rank 1 (64 B)", the first eight transfers.
std::string describeBatch(const std::vector<P2pOp>& ops) {
  std::string what = "send/recv:";
  for (size_t i = 0; i < ops.size() && i < 8; ++i) {
    what += std::string(ops[i].kind == P2pOp::Kind::kSend ? " send to " : " receive from ") +
            "rank " + std::to_string(ops[i].peer) + " (" +
            std::to_string(ops[i].count * dataTypeSize(ops[i].type)) + " B)";
  }
  if (ops.size() > 8) what += " and " + std::to_string(ops.size() - 8) + " more";
  return what;
}

}  // namespace

Calls::Calls(const Config& config, const Members& members, Health& health, Recorder& recorder,
             Links& links)
    : config_(config),
      members_(members),
      health_(health),
      recorder_(recorder),
      links_(links),
      schedules_(config, members, links, recorder),
      tiny_(links, recorder) {
  ways_.push_back(makeZeroCopyWay(parts()));
  ways_.push_back(makeOneShotWay(parts(), tiny_));
  ways_.push_back(makeDeterministicRingWay(parts()));
  ways_.push_back(makeScheduledWay(parts()));
  p2pWay_ = makeHostP2pWay(parts());
}

void Calls::attachGpu(GpuSide* gpu) {
  gpu_ = gpu;
  schedules_.attachGpu(gpu);
  ways_.clear();
  ways_.push_back(makeGpuLoneCopyWay(parts()));
  ways_.push_back(makeGpuSymmetricWay(parts(), windows_));
  ways_.push_back(makeGpuLaunchWay(parts()));
  p2pWay_ = makeGpuP2pWay(parts());
}

Status Calls::checkUsable() const {
  BRAID_TRY(health_.checkUsable());
  if (gpu_) {
    BRAID_TRY(health_.explainFault(gpu_->faultStatus())
                  .withContext("communicator unusable after a kernel gave up"));
  }
  return Status::success();
}

Status Calls::run(const CollectiveCall& call) {
  if (tiny_.takes(call)) return runTiny(call);
  BRAID_TRY(checkUsable());
  // The record keeps the call's fields; the words are made only for a failure.
  Recorder::Scope record(recorder_, call);
  Status s = dispatch(call, record);
  if (profiler::CommProfiler* p = recorder_.profiler()) p->stopCall();
  return record.close(std::move(s));
}

Status Calls::runTiny(const CollectiveCall& call) {
  BRAID_TRY(checkUsable());
  profiler::CommProfiler* profiler = recorder_.profiler();
  if (profiler != nullptr) profiler->startColl(collEventFields(call, &tiny_.choice(), 1));
  Status started = tiny_.start(call);
  // The input is on its way: the record is written now, before the wait.
  Recorder::Scope record(recorder_, call);
  record.plan(tiny_.choice(), nullptr, "one-shot (tiny lane)");
  WayCall wc{call, record, tiny_.hostOp(), {}, tiny_.choice()};
  const Outcome ran = Outcome::ranIt(tiny_.complete(call, std::move(started)), true);
  Status s = settle(wc, ran);
  if (profiler != nullptr) profiler->stopCall();
  return record.close(std::move(s));
}

Status Calls::dispatch(const CollectiveCall& call, Recorder::Scope& record) {
  links_.expectTraffic();
  if (config_.checkCalls) {
    record.flush();  // the check meets the peers: a hang there must show the call
    BRAID_TRY(health_.explainFailure(checkCallAgrees(call)));
  }
  if (gpu_) return health_.explainFailure(dispatchOnGpu(call, record));
  return dispatchOnHost(call, record);
}

Status Calls::dispatchOnHost(const CollectiveCall& call, Recorder::Scope& record) {
  WayCall wc{call, record, {}, {}, {}};
  if (reduces(call.collective)) {
    BRAID_ASSIGN_OR_RETURN(wc.hostOp, userOps_.hostOp(call.type, call.op, members_.nranks));
  }
  if (empty(call, members_.nranks)) return Status::success();
  return runWays(wc);
}

Status Calls::dispatchOnGpu(const CollectiveCall& call, Recorder::Scope& record) {
  if (empty(call, members_.nranks)) return Status::success();
  // The device is current (Comm's DeviceGuard), and what the first call of a shape sets up
  // runs in relaxed capture mode where it is made (GpuSide), so that a call already seen asks
  // the runtime nothing but whether its stream is being captured.
  if (readsInput(call, members_.rank)) BRAID_TRY(gpu_->checkBuffer(call.input, "sendbuff"));
  if (holdsResult(call, members_.rank)) BRAID_TRY(gpu_->checkBuffer(call.output, "recvbuff"));
  WayCall wc{call, record, {}, {}, {}};
  if (reduces(call.collective)) {
    BRAID_ASSIGN_OR_RETURN(wc.spec, userOps_.spec(call.type, call.op, members_.nranks));
  }
  return runWays(wc);
}

Status Calls::runWays(WayCall& wc) {
  double traceStart = 0;
  if (profiler::CommProfiler* p = recorder_.profiler()) {
    // The collective's event names its algorithm as it starts: the choice is made first (a
    // failed one is left to the way that needs it to report).
    if (!wc.choice) {
      Result<tune::Choice> chosen = selector_->choose(wc.call);
      if (chosen.ok()) wc.choice = chosen.value();
      traceStart = recorder_.traceNowUs();
    }
    p->startColl(collEventFields(wc.call, wc.choice ? &*wc.choice : nullptr, links_.nchannels()));
  }
  for (const std::unique_ptr<Way>& way : ways_) {
    if (way->needsChoice() && !wc.choice) {
      BRAID_ASSIGN_OR_RETURN(wc.choice, selector_->choose(wc.call));
      traceStart = recorder_.traceNowUs();
    }
    const Outcome outcome = way->run(wc);
    if (!outcome.taken) continue;
    if (wc.choice) {
      // What ran it says, else the choice's (a tuner plugin's), else the communicator's.
      int channels = links_.nchannels();
      if (wc.choice->nchannels > 0) channels = std::min(channels, wc.choice->nchannels);
      if (outcome.channels != 0) channels = static_cast<int>(outcome.channels);
      recorder_.traceCall(wc.call, *wc.choice, channels, traceStart, outcome.ran);
    }
    return settle(wc, outcome);
  }
  return internalError("no way runs " + describeCall(wc.call));
}

Status Calls::settle(const WayCall& wc, const Outcome& outcome) {
  const CollectiveCall& call = wc.call;
  if (!outcome.status.ok()) {
    if (gpu_) return outcome.status;  // dispatch explains it
    return failed(std::string(collectiveName(call.collective)) + " (" +
                      algo::algorithmName(wc.choice->algorithm) + ", " +
                      algo::protocolName(wc.choice->protocol) + ")",
                  outcome.status);
  }
  // avg divides once, on the part of the result this rank holds: everywhere but a reduce's
  // non-roots. A schedule's program and the zero-copy board do it themselves; the one-shot
  // board and the deterministic ring leave it here.
  if (outcome.finishLeft && holdsResult(call, members_.rank) && reduces(call.collective)) {
    wc.hostOp.finishOutput(call.output, call.count);
  }
  return Status::success();
}

Status Calls::failed(const std::string& what, const Status& s) {
  Status explained = health_.explainFailure(s);
  health_.markBroken(explained);
  BRAID_WARN("%s failed: %s", what.c_str(), explained.message().c_str());
  return explained;
}

Status Calls::sendRecv(const std::vector<P2pOp>& ops, void* stream) {
  BRAID_TRY(checkUsable());
  // A host batch notes its waits in the recorder's first channel (exec/p2p_executor.h).
  Recorder::Scope record(recorder_, describeBatch(ops), "send/recv", "point-to-point",
                         gpu_ ? std::vector<uint32_t>{} : std::vector<uint32_t>{1});
  links_.expectTraffic();
  profiler::CommProfiler* profiler = recorder_.profiler();
  if (profiler != nullptr) profiler->startP2p(p2pEventFields(ops, 1));
  Status s = p2pWay_->run(ops, stream);
  if (profiler != nullptr) profiler->stopCall();
  if (!s.ok()) s = gpu_ ? health_.explainFailure(s) : failed("send/recv", s);
  return record.close(std::move(s));
}

}  // namespace braid::comm
