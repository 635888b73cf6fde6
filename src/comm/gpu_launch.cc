// GpuSide's launches (gpu_side.h): a GPU communicator's work: calls gather in a pending launch
// (GpuSide::pending) and go to the GPU as one kernel of the engine
// (kernels/engine_launch.h) on the caller's stream.
//
// Outside a group every call launches at once. Within one (Comm::
// beginFusedLaunch / endFusedLaunch), calls gather until the group ends,
// or until one cannot join: it is on another stream, it reduces with
// another (datatype, operator) than a reducing call already there (each
// kernel has one pair's loops), the launch holds kMaxLaunchCalls, it would
// need more blocks than this rank's share of the device (GpuSide::
// blockBudget, gpu_channels.h), or it touches memory a call already there
// writes (or writes memory one reads).
//
// Blocks: a collective's channels start at block 0, so consecutive
// collectives reuse the same blocks in order, as every rank does. Point-to-
// point transfers get a block per (peer, direction) after the collectives'
// blocks, so messages to one peer keep their order and never wait behind a
// collective.
//
// Launches of one communicator run in order: one on another stream than
// the last first waits for the last's event, so no two kernels of a
// communicator use its FIFOs at once. A launch into a stream being captured
// into a CUDA graph skips the event: the graph's own edges order it.
#include <algorithm>
#include <map>

#include "base/log.h"
#include "comm/gpu_side.h"
#include "kernels/engine_launch.h"

namespace braid::comm {
namespace {

namespace engine = kernels::engine;

// Whether `calls` can join the pending launch: the same stream, room (calls, and blocks within
// the budget that keeps every rank on the device resident), at most one (datatype, operator)
// among the calls that reduce, and no memory that one of them writes and another reads or
// writes: the launch's blocks order its calls per block only, so the second call's block 0
// could read what the first call's block 1 has not written yet.
bool joins(const PendingLaunch& p, const std::vector<engine::EngineCall>& calls,
           const std::vector<std::pair<int, int>>& lanes, const std::vector<Access>& accesses,
           void* stream, int blockBudget) {
  if (p.calls.empty()) return true;
  if (p.stream != stream || p.calls.size() + calls.size() > engine::kMaxLaunchCalls) return false;
  LaunchBlocks both = p.blocks;
  for (size_t i = 0; i < calls.size(); ++i) both.add(calls[i], lanes[i]);
  if (both.total() > static_cast<uint32_t>(blockBudget)) return false;
  for (const engine::EngineCall& call : calls) {
    if (!call.copyOnly && p.typed && (p.type != call.type || p.op != call.op)) return false;
  }
  for (const Access& mine : accesses) {
    for (const Access& theirs : p.accesses) {
      if (conflicts(mine, theirs)) return false;
    }
  }
  return true;
}

}  // namespace

Status GpuSide::enqueue(const std::vector<engine::EngineCall>& calls,
                        const std::vector<std::pair<int, int>>& lanes,
                        const std::vector<Access>& accesses, void* callStream) {
  if (calls.empty()) return Status::success();
  if (calls.size() > engine::kMaxLaunchCalls) {
    return invalidUsage("a batch of " + std::to_string(calls.size()) +
                        " sends and receives on a GPU communicator: braid launches at most " +
                        std::to_string(engine::kMaxLaunchCalls) +
                        " at once so far (split the group)");
  }
  LaunchBlocks mine;
  for (size_t i = 0; i < calls.size(); ++i) mine.add(calls[i], lanes[i]);
  const uint32_t blocks = mine.total();
  if (blocks > static_cast<uint32_t>(blockBudget_)) {
    return invalidUsage(
        "a batch of " + std::to_string(calls.size()) + " calls needs " + std::to_string(blocks) +
        " blocks at once (a block per channel of a collective and per peer and direction of "
        "sends and receives), more than the " +
        std::to_string(blockBudget_) +
        " this rank may use so that the blocks of every rank on its GPU are resident together "
        "(gpu_channels.h): split the group, or run fewer ranks per GPU");
  }
  PendingLaunch& p = pending_;
  if (!joins(p, calls, lanes, accesses, callStream, blockBudget_)) BRAID_TRY(flush());
  if (p.calls.empty()) p.stream = callStream;
  p.accesses.insert(p.accesses.end(), accesses.begin(), accesses.end());
  for (size_t i = 0; i < calls.size(); ++i) {
    p.calls.push_back(calls[i]);
    p.lanes.push_back(lanes[i]);
    p.blocks.add(calls[i], lanes[i]);
    p.flightSeqs.push_back(recorder_.flightSeq());
    if (!calls[i].copyOnly) {
      p.typed = true;
      p.type = calls[i].type;
      p.op = calls[i].op;
    }
  }
  return fusing_ ? Status::success() : flush();
}

namespace {

// Puts `p`'s calls into `args` with their first block: every collective starts at block 0 (they
// run in order on each block), each point-to-point lane gets a block of its own after the
// collectives' widest. Returns the blocks the launch needs.
uint32_t placeCalls(const PendingLaunch& p, engine::EngineArgs& args) {
  uint32_t collectiveBlocks = 0;
  for (size_t i = 0; i < p.calls.size(); ++i) {
    if (p.lanes[i].first < 0) collectiveBlocks = std::max(collectiveBlocks, p.calls[i].nchannels);
  }
  std::map<std::pair<int, int>, uint32_t> laneBlock;
  uint32_t blocks = collectiveBlocks;
  for (size_t i = 0; i < p.calls.size(); ++i) {
    engine::EngineCall call = p.calls[i];
    if (p.lanes[i].first < 0) {
      call.firstBlock = 0;
    } else {
      auto [it, fresh] = laneBlock.emplace(p.lanes[i], blocks);
      if (fresh) ++blocks;
      call.firstBlock = it->second;
    }
    args.calls[i] = call;
  }
  return blocks;
}

}  // namespace

// Every launch of the communicator runs on the same FIFOs and cursors, so one waits for the
// one before, whatever stream or graph either is on: lastLaunch_ is recorded after each. A
// captured launch waits and records through external event nodes, which each replay makes as
// it is launched (gpu/runtime.h), so that a replay follows the launch before it, eager or
// replayed, and the next launch follows the replay. Once anything was captured, an eager
// launch waits even on the stream of the last eager one: a replay may have run since.
Status GpuSide::orderedLaunch(const gpu::Launch& launch, gpu::Stream stream, bool capturing) {
  gpu::Runtime& rt = *runtime_;
  if (capturing) {
    BRAID_TRY(rt.streamWaitEventExternal(stream, lastLaunch_));
    BRAID_TRY(rt.launch(launch, stream).withContext("launching the engine kernel"));
    BRAID_TRY(rt.eventRecordExternal(lastLaunch_, stream));
    capturedAny_ = true;
    return Status::success();
  }
  if ((launchedAny_ && lastStream_ != stream) || capturedAny_) {
    BRAID_TRY(rt.streamWaitEvent(stream, lastLaunch_));
  }
  BRAID_TRY(rt.launch(launch, stream).withContext("launching the engine kernel"));
  BRAID_TRY(rt.eventRecord(lastLaunch_, stream));
  lastStream_ = stream;
  launchedAny_ = true;
  return Status::success();
}

Status GpuSide::endFusing() {
  fusing_ = false;
  Status s = flush();
  if (!s.ok()) pending_ = {};
  return s;
}

Status GpuSide::flush() {
  PendingLaunch p = std::move(pending_);
  pending_ = {};
  if (p.calls.empty()) return Status::success();
  gpu::Runtime& rt = *runtime_;
  engine::EngineArgs args{};
  const uint32_t blocks = placeCalls(p, args);
  args.launchSeq = ++launches_;
  args.waits = waits_;
  for (size_t i = 0; i < p.calls.size(); ++i) {
    recorder_.noteEnqueued(p.flightSeqs[i], args.launchSeq, static_cast<uint32_t>(i),
                           args.calls[i].firstBlock);
  }
  args.ncalls = static_cast<uint32_t>(p.calls.size());
  args.rank = members_.rank;
  // A launch that only moves data runs on any kernel; the int8 one it is.
  args.type = p.typed ? p.type : static_cast<uint8_t>(DataType::kInt8);
  args.op = p.typed ? p.op : static_cast<uint8_t>(RedOp::kSum);
  args.abortFlag = abortWord_;
  args.fault = fault_;
  args.timeoutNs = static_cast<uint64_t>(config_.timeoutMs) * 1000000;
  const kernels::EngineKernel kernel =
      kernels::engineKernelFor(static_cast<DataType>(args.type), static_cast<RedOp>(args.op));
  if (kernel.host == nullptr)
    return internalError("no engine kernel for this datatype and operator");
  gpu::Launch launch;
  launch.deviceFunction = kernel.device;
  launch.hostFunction = kernel.host;
  launch.args = &args;
  launch.argBytes = engine::engineArgsBytes(args.ncalls);
  launch.paramBytes = sizeof(args);
  launch.blocks = std::max<uint32_t>(blocks, 1);
  launch.threadsPerBlock = kernels::engineThreadsPerBlock();

  // The device is current (every entry holds a gpu::DeviceGuard): whether the stream is being
  // captured is the one question a launch asks, since capture may begin between any two calls.
  BRAID_ASSIGN_OR_RETURN(const bool capturing, rt.streamCapturing(p.stream));
  profiler::CommProfiler* profiler = recorder_.profiler();
  void* launchEvent = profiler != nullptr ? profiler->startKernelLaunch(p.stream) : nullptr;
  Status launched = orderedLaunch(launch, p.stream, capturing);
  if (launchEvent != nullptr) profiler->stop(launchEvent);
  BRAID_TRY(launched);
  BRAID_TRACE("gpu: launched %u call(s) on %u block(s)", args.ncalls, launch.blocks);
  return Status::success();
}

}  // namespace braid::comm
