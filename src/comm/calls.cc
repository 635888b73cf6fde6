// Calls (calls.h): a collective from its check to its last store on the host: each chooses
// its algorithm and protocol (comm/selector.h), builds or reuses the rank's Schedule and its
// connections, runs it on the host executor (or the one-shot board), and applies the
// operator's final step (avg's division) to the part of the result this rank holds.
#include "comm/calls.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "algo/ring.h"
#include "algo/tree.h"
#include "base/log.h"
#include "comm/gpu_side.h"

namespace braid::comm {
namespace {

// Whether a cached layout is the call's: both uniform, or the same blocks.
bool sameBlocks(const std::vector<size_t>& cached, const size_t* call, int nranks) {
  if (call == nullptr) return cached.empty();
  return cached.size() == static_cast<size_t>(nranks) &&
         std::equal(cached.begin(), cached.end(), call);
}

// A call with nothing to move: a variable-count call moves other ranks' blocks even when its
// own is empty, so it has nothing to do only when every block is.
bool empty(const CollCall& call, int nranks) {
  return call.blockCounts == nullptr ? call.count == 0
                                     : std::all_of(call.blockCounts, call.blockCounts + nranks,
                                                   [](size_t c) { return c == 0; });
}

}  // namespace

// Variable-count calls are cached too, by their blocks: a training step
// repeats them with the same counts as often as the uniform ones.
Result<const Calls::CachedSchedule*> Calls::scheduleFor(const CollCall& call,
                                                        const tune::Choice& choice) {
  const int rank = members_.rank;
  const int nranks = members_.nranks;
  const size_t elemBytes = dataTypeSize(call.type);
  for (const auto& c : schedules_) {
    if (c.collective == call.collective && c.count == call.count && c.elemBytes == elemBytes &&
        c.root == call.root && c.algorithm == choice.algorithm && c.protocol == choice.protocol &&
        sameBlocks(c.blockCounts, call.blockCounts, nranks) &&
        sameBlocks(c.blockOffsets, call.blockOffsets, nranks)) {
      return &c;
    }
  }
  algo::ScheduleSizes sizes;
  sizes.nranks = nranks;
  sizes.rank = rank;
  sizes.count = call.count;
  sizes.nchannels = links_.nchannels;
  algo::sizeForSlots(
      sizes, choice.protocol == algo::Protocol::kLl ? links_.llSlotBytes() : links_.slotBytes,
      transport::kFifoSlots, elemBytes);
  Result<algo::Schedule> made = invalidArgument("no schedule for this collective");
  std::vector<size_t> blockCounts;
  std::vector<size_t> blockOffsets;
  if (choice.algorithm == algo::Algorithm::kTree) {
    algo::TreeParams p;
    static_cast<algo::ScheduleSizes&>(p) = sizes;
    p.deterministic = selector_.deterministic;
    p.plannedTrees = members_.trees;
    if (call.collective == Collective::kAllReduce) made = algo::treeAllReduce(p);
    if (call.collective == Collective::kBroadcast) made = algo::treeBroadcast(p, call.root);
    if (call.collective == Collective::kReduce) made = algo::treeReduce(p, call.root);
  } else {
    algo::RingParams p;
    static_cast<algo::ScheduleSizes&>(p) = sizes;
    p.order = members_.ring;
    if (!members_.rings.empty()) p.channelOrders = members_.channelOrders(sizes.nchannels);
    if (call.blockCounts != nullptr) {
      p.blockCounts.assign(call.blockCounts, call.blockCounts + nranks);
      p.blockOffsets.assign(call.blockOffsets, call.blockOffsets + nranks);
    }
    switch (call.collective) {
      case Collective::kAllReduce:
        made = algo::ringAllReduce(p);
        break;
      case Collective::kReduceScatter:
        made = algo::ringReduceScatter(p);
        break;
      case Collective::kAllGather:
        made = algo::ringAllGather(p);
        break;
      case Collective::kBroadcast:
        made = algo::ringBroadcast(p, call.root);
        break;
      case Collective::kReduce:
        made = algo::ringReduce(p, call.root);
        break;
    }
    blockCounts = std::move(p.blockCounts);
    blockOffsets = std::move(p.blockOffsets);
  }
  if (!made.ok()) return made.status();
  if (config_.dumpSchedule) {
    fprintf(stderr, "[rank %d] %s %s %s", rank, algo::algorithmName(choice.algorithm),
            algo::protocolName(choice.protocol),
            algo::formatSchedule(made.value(), call.type).c_str());
  }
  CachedSchedule entry;
  entry.collective = call.collective;
  entry.count = call.count;
  entry.elemBytes = elemBytes;
  entry.root = call.root;
  entry.algorithm = choice.algorithm;
  entry.protocol = choice.protocol;
  entry.blockCounts = std::move(blockCounts);
  entry.blockOffsets = std::move(blockOffsets);
  entry.schedule = std::move(made).value();
  // The operator's final step (avg's division) runs where the rank holds
  // final values: everywhere but a reduce's non-roots.
  const bool finishes =
      reduces(call.collective) && (call.collective != Collective::kReduce || rank == call.root);
  BRAID_ASSIGN_OR_RETURN(entry.program, exec::lowerSchedule(entry.schedule, finishes));
  if (gpu_) {
    BRAID_ASSIGN_OR_RETURN(const std::vector<exec::ChannelPorts> ports,
                           gpu_->linkSchedule(entry.program, choice.protocol));
    BRAID_ASSIGN_OR_RETURN(exec::DeviceProgram device,
                           exec::DeviceProgram::upload(
                               *gpu_->runtime, entry.program, ports, gpu_->stream,
                               choice.protocol == algo::Protocol::kLl ? links_.llSlotBytes() : 0));
    entry.device = std::make_shared<exec::DeviceProgram>(std::move(device));
  } else {
    BRAID_TRY(links_.linkSchedule(entry.program, choice.protocol, &entry.connections)
                  .withContext("connecting the collective's FIFOs"));
  }
  // A handful of entries covers the collectives a training step repeats.
  constexpr size_t kCacheEntries = 8;
  if (schedules_.size() >= kCacheEntries) {
    // A queued launch or a captured graph may still read an evicted device program.
    if (gpu_ && schedules_.front().device) gpu_->retired.push_back(schedules_.front().device);
    schedules_.erase(schedules_.begin());
  }
  schedules_.push_back(std::move(entry));
  return &schedules_.back();
}

// Zero-copy takes a large all_reduce or all_gather (of equal blocks) when braid chooses the
// algorithm (BRAID_ALGO / NCCL_ALGO unset: a forced ring or tree runs as forced), the ranks can
// reach each other's memory, and its result has the bits the FIFO path's would
// (exec/zero_copy.h): an all_gather only copies. Not reduce_scatter, though the board runs it:
// its ring moves no more memory than zero-copy does (the FIFO slots stay in the caches), and it
// measured faster here (braid-perf -R 1, 2 ranks, 64 MiB: in place 7.2-7.4 GB/s busbw on the
// FIFOs against 4.9-5.6 zero-copy; out of place 5.2 against 4.8-5.6), where all_gather's
// zero-copy doubles (6.1-6.7 against 4.0-4.9; in place 11.1-13.4 against 6.8-7.9).
bool Calls::zeroCopyFits(const CollCall& call, const kernels::HostOp& op) const {
  const exec::ZeroCopyBoard* board = links_.zeroCopy.get();
  if (board == nullptr || !board->usable() || !config_.algo.empty()) return false;
  const size_t n = static_cast<size_t>(members_.nranks);
  const size_t elemBytes = dataTypeSize(call.type);
  const size_t minBytes = static_cast<size_t>(config_.zeroCopyMinBytes);
  switch (call.collective) {
    case Collective::kAllReduce:
      return call.count * elemBytes >= minBytes &&
             exec::zeroCopyKeepsResult(call.type, call.op, op, members_.nranks,
                                       selector_.deterministic);
    case Collective::kAllGather:
      return call.blockCounts == nullptr && call.count * elemBytes * n >= minBytes;
    default:
      return false;
  }
}

Status Calls::checkUsable() const {
  BRAID_TRY(health_.checkUsable());
  if (gpu_) {
    BRAID_TRY(health_.explainFault(gpu_->faultStatus())
                  .withContext("communicator unusable after a kernel gave up"));
  }
  return Status::success();
}

Status Calls::run(const CollCall& call) {
  if (tiny_.takes(call)) return runTiny(call);
  BRAID_TRY(checkDataType(call.type));
  if (rooted(call.collective)) BRAID_TRY(checkRank(call.root, members_.nranks, "root"));
  BRAID_TRY(checkUsable());
  // The record keeps the call's fields; the words are made only for a failure.
  recorder_.begin(call);
  const Status s = runRecorded(call);
  recorder_.end(s);
  if (!s.ok()) recorder_.noteFailure(s, describeCall(call));
  return s;
}

Status Calls::runRecorded(const CollCall& call) {
  const int rank = members_.rank;
  const int nranks = members_.nranks;
  if (config_.checkCalls) {
    recorder_.flush();  // the check meets the peers: a hang there must show the call
    BRAID_TRY(health_.explainFailure(checkCallAgrees(call)));
  }
  if (gpu_) {
    if (empty(call, nranks)) return Status::success();
    return health_.explainFailure(runOnGpu(call));
  }
  kernels::HostOp op;
  if (reduces(call.collective)) {
    BRAID_ASSIGN_OR_RETURN(op, userOps.hostOp(call.type, call.op, nranks));
  }
  if (empty(call, nranks)) return Status::success();
  BRAID_ASSIGN_OR_RETURN(const tune::Choice choice, selector_.choose(call));
  Status s = Status::success();
  const size_t elemBytes = dataTypeSize(call.type);
  const double traceStart = recorder_.traceNowUs();
  const bool deterministicRing = selector_.deterministic &&
                                 choice.algorithm == algo::Algorithm::kRing &&
                                 call.collective == Collective::kAllReduce && nranks > 1;
  // Zero-copy comes first: every rank learns there whether all can take it (the buffers, the
  // board), and those that cannot decline together and go on below.
  exec::ZeroCopyMode zeroCopied = exec::ZeroCopyMode::kDeclined;
  if (zeroCopyFits(call, op)) {
    recorder_.flush();  // the board meets the peers before the plan is known
    exec::ZeroCopyBoard& board = *links_.zeroCopy;
    const transport::WaitContext wait = links_.waitContext();
    if (call.collective == Collective::kAllReduce) {
      s = board.allReduce(call.input, call.output, call.count, call.type, op, wait, &zeroCopied);
    } else {
      s = board.allGather(call.input, call.output, call.count, call.type, wait, &zeroCopied);
    }
    if (zeroCopied != exec::ZeroCopyMode::kDeclined) {
      recorder_.plan(choice, nullptr, "zero-copy");
      if (config_.dumpSchedule) {
        fprintf(stderr,
                "[rank %d] %s of %zu x %s: zero-copy (%s), no schedule (each rank reads its "
                "block of every peer's input in place, or writes its own into every peer's "
                "output)\n",
                rank, collectiveName(call.collective), call.count, dataTypeName(call.type),
                zeroCopied == exec::ZeroCopyMode::kMapped ? "mapped" : "cross-memory copies");
      }
    }
  }
  // The executor applied avg's division itself, or failed.
  const bool finished = !s.ok() || zeroCopied != exec::ZeroCopyMode::kDeclined;
  if (finished) {
    // Nothing more to run.
  } else if (choice.algorithm == algo::Algorithm::kOneShot) {
    recorder_.plan(choice, nullptr);
    if (config_.dumpSchedule) {
      fprintf(stderr,
              "[rank %d] %s of %zu x %s: one-shot %s, no schedule (every rank reads every "
              "peer's input from the shared board)\n",
              rank, collectiveName(call.collective), call.count, dataTypeName(call.type),
              algo::protocolName(choice.protocol));
    }
    s = links_.oneShot->allReduce(call.input, call.output, call.count, elemBytes, op,
                                  choice.protocol, links_.waitContext(),
                                  recorder_.flight->hostWaits());
    if (s.ok()) armTinyLane(call, choice, op);
  } else if (deterministicRing) {
    recorder_.plan(choice, nullptr);
    s = deterministicRingAllReduce(call, op, choice.protocol);
  } else {
    // The first call of a shape makes its schedule and connects its FIFOs (lazily,
    // links.cc): a peer that dies while they are greeted fails it here, and that failure
    // is explained as the executor's are, naming the lost rank rather than the socket that closed.
    Result<const CachedSchedule*> cached = scheduleFor(call, choice);
    if (cached.ok()) {
      recorder_.plan(choice, &cached.value()->program);
      void* output = call.output;
      // A tree reduce keeps partial results in the output of inner nodes; a
      // non-root's own output must stay untouched, so it gets scratch.
      if (call.collective == Collective::kReduce && rank != call.root &&
          choice.algorithm == algo::Algorithm::kTree) {
        scratch_.resize(std::max(scratch_.size(), call.count * elemBytes));
        output = scratch_.data();
      }
      // How the slots are written: as BRAID_STREAM_SLOTS forces, or as calls measure
      // (tune/slot_stores.h).
      const size_t bytes = call.count * elemBytes;
      const bool tuned = config_.streamSlots < 0;
      const bool stream =
          tuned ? slotStores_.streamNext(bytes, links_.streamSlots) : config_.streamSlots == 1;
      exec::HostCall hostCall{
          call.input, output, elemBytes, op, recorder_.trace.get(), recorder_.flight->hostWaits(),
          stream};
      const auto started = std::chrono::steady_clock::now();
      s = exec::runOnHost(cached.value()->program, hostCall, cached.value()->connections,
                          links_.waitContext());
      if (tuned && s.ok()) {
        slotStores_.record(
            bytes, stream,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      }
    } else {
      s = cached.status();
    }
  }
  recorder_.traceCall(call, choice, links_.nchannels, traceStart,
                      zeroCopied != exec::ZeroCopyMode::kDeclined ? "zero-copy" : nullptr);
  if (!s.ok()) return failed(call, choice, s);
  // avg divides once, on the part of the result this rank holds: a
  // schedule's program does it as its last instructions, the one-shot and
  // the deterministic ring here.
  const bool scheduled =
      finished || (choice.algorithm != algo::Algorithm::kOneShot && !deterministicRing);
  if (!scheduled && (call.collective != Collective::kReduce || rank == call.root)) {
    if (reduces(call.collective)) op.finishOutput(call.output, call.count);
  }
  return Status::success();
}

Status Calls::failed(const CollCall& call, const tune::Choice& choice, const Status& s) {
  Status explained = health_.explainFailure(s);
  health_.broken = explained;
  BRAID_WARN("%s (%s, %s) failed: %s", collectiveName(call.collective),
             algo::algorithmName(choice.algorithm), algo::protocolName(choice.protocol),
             explained.message().c_str());
  return explained;
}

Status Calls::sendRecv(const std::vector<P2pOp>& ops, void* stream) {
  BRAID_TRY(checkUsable());
  std::string what = "send/recv:";
  for (size_t i = 0; i < ops.size() && i < 8; ++i) {
    what += std::string(ops[i].kind == P2pOp::Kind::kSend ? " send to " : " receive from ") +
            "rank " + std::to_string(ops[i].peer) + " (" +
            std::to_string(ops[i].count * dataTypeSize(ops[i].type)) + " B)";
  }
  if (ops.size() > 8) what += " and " + std::to_string(ops.size() - 8) + " more";
  // A host batch notes its waits in the recorder's first channel (exec/p2p_executor.h).
  recorder_.begin(what, "point-to-point",
                  gpu_ ? std::vector<uint32_t>{} : std::vector<uint32_t>{1});
  const Status s = sendRecvRecorded(ops, stream);
  recorder_.end(s);
  if (!s.ok()) recorder_.noteFailure(s, "send/recv");
  return s;
}

Status Calls::sendRecvRecorded(const std::vector<P2pOp>& ops, void* stream) {
  if (gpu_) return health_.explainFailure(sendRecvOnGpu(ops, stream));
  std::vector<exec::P2pTask> tasks;
  tasks.reserve(ops.size());
  for (const auto& op : ops) {
    exec::P2pTask t;
    t.send = op.kind == P2pOp::Kind::kSend;
    t.peer = op.peer;
    t.sendBuffer = op.buffer;
    t.recvBuffer = op.buffer;
    t.bytes = op.count * dataTypeSize(op.type);
    tasks.push_back(t);
  }
  Status s = links_.runP2p(tasks, recorder_.flight->hostWaits());
  if (!s.ok()) {
    s = health_.explainFailure(s);
    health_.broken = s;
    BRAID_WARN("send/recv failed: %s", s.message().c_str());
  }
  return s;
}

}  // namespace braid::comm
