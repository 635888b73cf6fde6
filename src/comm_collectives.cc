// The collectives of braid::Comm: each chooses its algorithm and protocol
// (tune/select.h), builds or reuses the rank's Schedule and its connections,
// runs it on the host executor (or the one-shot board), and applies the
// operator's final step (avg's division) to the part of the result this
// rank holds.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "algo/ring.h"
#include "algo/tree.h"
#include "base/log.h"
#include "comm_impl.h"
#include "kernels/host_reduce.h"

namespace braid {
namespace {

Status checkBuffers(const void* input, const void* output, size_t count) {
  if (count == 0) return Status::success();
  if (input == nullptr) return invalidArgument("send buffer is NULL with count > 0");
  if (output == nullptr) return invalidArgument("receive buffer is NULL with count > 0");
  return Status::success();
}

// Whether a cached layout is the call's: both uniform, or the same blocks.
bool sameBlocks(const std::vector<size_t>& cached, const size_t* call, int nranks) {
  if (call == nullptr) return cached.empty();
  return cached.size() == static_cast<size_t>(nranks) &&
         std::equal(cached.begin(), cached.end(), call);
}

}  // namespace

void Comm::Impl::traceCall(const CollCall& call, const tune::Choice& choice, int nchannels,
                           double startUs) {
  if (!trace) return;
  trace::Event e;
  e.name = collectiveName(call.collective);
  e.startUs = startUs;
  e.durationUs = trace->nowUs() - startUs;
  e.args = std::string("\"algorithm\":\"") + algo::algorithmName(choice.algorithm) +
           "\",\"protocol\":\"" + algo::protocolName(choice.protocol) +
           "\",\"channels\":" + std::to_string(nchannels) +
           ",\"count\":" + std::to_string(call.count) + ",\"datatype\":\"" +
           dataTypeName(call.type) +
           "\",\"bytes\":" + std::to_string(call.count * dataTypeSize(call.type)) +
           ",\"predicted_us\":" + std::to_string(choice.predictedUs);
  trace->add(std::move(e));
}

namespace {

// What the selector's answer depends on in `call`: the size it is timed at
// (nccl-tests' size: the whole gathered or scattered buffer, from the
// largest block when the blocks vary) and whether only the ring can run it.
ChoiceKey choiceKey(const Comm::Impl::CollCall& call, int nranks) {
  const bool gathers =
      call.collective == Collective::kAllGather || call.collective == Collective::kReduceScatter;
  size_t elems = call.count;
  if (call.blockCounts != nullptr) {
    elems = *std::max_element(call.blockCounts, call.blockCounts + nranks);
  }
  ChoiceKey key;
  key.collective = call.collective;
  key.bytes = elems * dataTypeSize(call.type) * (gathers ? nranks : 1);
  key.variableCounts = call.blockCounts != nullptr;
  return key;
}

}  // namespace

Result<tune::Choice> Comm::Impl::choose(const CollCall& call) {
  const ChoiceKey key = choiceKey(call, nranks);
  if (const tune::Choice* cached = choices.find(key)) return *cached;
  tune::Query q;
  q.collective = call.collective;
  q.bytes = key.bytes;
  q.nranks = nranks;
  q.nchannels = nchannels;
  q.deterministic = deterministic;
  tune::Allowed a = allowed;
  // Variable-count blocks have only ring schedules.
  if (key.variableCounts) {
    a.algorithm[static_cast<int>(algo::Algorithm::kTree)] = false;
    a.algorithm[static_cast<int>(algo::Algorithm::kOneShot)] = false;
  }
  if (!oneShot && !(gpu && gpu->oneShot)) a.oneShotMaxBytes = 0;
  // Broadcast and reduce stay on the ring unless BRAID_ALGO asks for the
  // tree: the model times one call alone, but a chain's root returns once it
  // has sent, so calls issued back to back overlap along the chain and beat
  // the tree (braid-calibrate measured up to 2.9x at 2 ranks, 8 B).
  const bool rooted =
      call.collective == Collective::kBroadcast || call.collective == Collective::kReduce;
  if (rooted && config.algo.empty()) a.algorithm[static_cast<int>(algo::Algorithm::kTree)] = false;
  // The deterministic ring (owner computes, comm_deterministic.cc) runs on
  // the host only; on a GPU the tree gives the reference order.
  if (gpu && deterministic && call.collective == Collective::kAllReduce && nranks > 1) {
    a.algorithm[static_cast<int>(algo::Algorithm::kRing)] = false;
    a.algorithm[static_cast<int>(algo::Algorithm::kTree)] = true;
  }
  BRAID_ASSIGN_OR_RETURN(const tune::Choice choice, tune::choose(model, q, a));
  choices.insert(key, choice);
  return choice;
}

// Variable-count calls are cached too, by their blocks: a training step
// repeats them with the same counts as often as the uniform ones.
Result<const Comm::Impl::CachedSchedule*> Comm::Impl::scheduleFor(const CollCall& call,
                                                                  const tune::Choice& choice) {
  const size_t elemBytes = dataTypeSize(call.type);
  for (const auto& c : scheduleCache) {
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
  sizes.nchannels = nchannels;
  algo::sizeForSlots(sizes, choice.protocol == algo::Protocol::kLl ? llSlotBytes() : slotBytes,
                     transport::kFifoSlots, elemBytes);
  Result<algo::Schedule> made = invalidArgument("no schedule for this collective");
  std::vector<size_t> blockCounts;
  std::vector<size_t> blockOffsets;
  if (choice.algorithm == algo::Algorithm::kTree) {
    algo::TreeParams p;
    static_cast<algo::ScheduleSizes&>(p) = sizes;
    p.deterministic = deterministic;
    if (call.collective == Collective::kAllReduce) made = algo::treeAllReduce(p);
    if (call.collective == Collective::kBroadcast) made = algo::treeBroadcast(p, call.root);
    if (call.collective == Collective::kReduce) made = algo::treeReduce(p, call.root);
  } else {
    algo::RingParams p;
    static_cast<algo::ScheduleSizes&>(p) = sizes;
    p.order = ring;
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
  if (config.dumpSchedule) {
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
  if (gpu) {
    BRAID_ASSIGN_OR_RETURN(const std::vector<exec::ChannelPorts> ports,
                           linkGpuSchedule(entry.program, choice.protocol));
    BRAID_ASSIGN_OR_RETURN(
        exec::DeviceProgram device,
        exec::DeviceProgram::upload(*gpu->runtime, entry.program, ports, gpu->stream,
                                    choice.protocol == algo::Protocol::kLl ? llSlotBytes() : 0));
    entry.device = std::make_shared<exec::DeviceProgram>(std::move(device));
  } else {
    BRAID_TRY(linkSchedule(entry.program, choice.protocol, &entry.connections)
                  .withContext("connecting the collective's FIFOs"));
  }
  // A handful of entries covers the collectives a training step repeats.
  constexpr size_t kCacheEntries = 8;
  if (scheduleCache.size() >= kCacheEntries) {
    // A queued launch or a captured graph may still read an evicted device program.
    if (gpu && scheduleCache.front().device) gpu->retired.push_back(scheduleCache.front().device);
    scheduleCache.erase(scheduleCache.begin());
  }
  scheduleCache.push_back(std::move(entry));
  return &scheduleCache.back();
}

Result<OpSpec> Comm::Impl::opSpecFor(DataType type, RedOp op) {
  OpSpec spec;
  spec.args.nranks = nranks;
  int o = static_cast<int>(op);
  if (o >= kFirstUserOp) {
    size_t index = static_cast<size_t>(o - kFirstUserOp);
    if (index >= userOps.size() || !userOps[index]) {
      return invalidArgument("reduction op " + std::to_string(o - kFirstUserOp + kNumRedOps) +
                             " is not a live ncclRedOpCreatePreMulSum op of this communicator");
    }
    const UserOp& u = *userOps[index];
    if (u.type != type) {
      return invalidArgument(std::string("premulsum op was made for ") + dataTypeName(u.type) +
                             " but is used with " + dataTypeName(type));
    }
    spec.functor = RedOp::kPreMulSum;
    if (u.byPointer) {
      spec.scalarPointer = u.pointer;
    } else {
      memcpy(spec.args.scalar, u.value, dataTypeSize(type));
    }
    return spec;
  }
  if (o < 0 || o >= kNumRedOps) return invalidArgument("unknown reduction op " + std::to_string(o));
  spec.functor = op;
  return spec;
}

Result<kernels::HostOp> Comm::Impl::hostOpFor(DataType type, RedOp op) {
  BRAID_ASSIGN_OR_RETURN(OpSpec spec, opSpecFor(type, op));
  // A scalar given by pointer is read when the collective runs, as NCCL
  // reads a device scalar when the kernel runs.
  if (spec.scalarPointer != nullptr)
    memcpy(spec.args.scalar, spec.scalarPointer, dataTypeSize(type));
  return kernels::hostOp(type, spec.functor, spec.args);
}

Status Comm::Impl::runCollective(const CollCall& call) {
  BRAID_TRY(checkDataType(call.type));
  const bool rooted =
      call.collective == Collective::kBroadcast || call.collective == Collective::kReduce;
  if (rooted) BRAID_TRY(checkRank(call.root, nranks, "root"));
  BRAID_TRY(checkUsable());
  const std::string what = describeCall(call);
  flightSeq = flight->begin(what, "", {});
  const Status s = runCollectiveRecorded(call);
  flight->end(flightSeq, s);
  if (!s.ok()) noteFailure(s, what);
  return s;
}

Status Comm::Impl::runCollectiveRecorded(const CollCall& call) {
  if (config.checkCalls) BRAID_TRY(explainFailure(checkCallAgrees(call)));
  if (gpu) {
    const bool empty = call.blockCounts == nullptr
                           ? call.count == 0
                           : std::all_of(call.blockCounts, call.blockCounts + nranks,
                                         [](size_t c) { return c == 0; });
    if (empty) return Status::success();
    return explainFailure(runCollectiveOnGpu(call));
  }
  kernels::HostOp op;
  if (reduces(call.collective)) {
    BRAID_ASSIGN_OR_RETURN(op, hostOpFor(call.type, call.op));
  }
  // A variable-count call moves other ranks' blocks even when its own is
  // empty: it has nothing to do only when every block is.
  const bool empty = call.blockCounts == nullptr
                         ? call.count == 0
                         : std::all_of(call.blockCounts, call.blockCounts + nranks,
                                       [](size_t c) { return c == 0; });
  if (empty) return Status::success();
  BRAID_ASSIGN_OR_RETURN(const tune::Choice choice, choose(call));
  Status s = Status::success();
  const size_t elemBytes = dataTypeSize(call.type);
  const double traceStart = trace ? trace->nowUs() : 0;
  const bool deterministicRing = deterministic && choice.algorithm == algo::Algorithm::kRing &&
                                 call.collective == Collective::kAllReduce && nranks > 1;
  if (choice.algorithm == algo::Algorithm::kOneShot) {
    planFlight(choice, nullptr);
    if (config.dumpSchedule) {
      fprintf(stderr,
              "[rank %d] %s of %zu x %s: one-shot %s, no schedule (every rank reads every "
              "peer's input from the shared board)\n",
              rank, collectiveName(call.collective), call.count, dataTypeName(call.type),
              algo::protocolName(choice.protocol));
    }
    s = oneShot->allReduce(call.input, call.output, call.count, elemBytes, op, choice.protocol,
                           waitContext());
  } else if (deterministicRing) {
    planFlight(choice, nullptr);
    s = deterministicRingAllReduce(call, op, choice.protocol);
  } else {
    // The first call of a shape makes its schedule and connects its FIFOs (lazily,
    // comm_links.cc): a peer that dies while they are greeted fails it here, and that failure
    // is explained as the executor's are, naming the lost rank rather than the socket that closed.
    Result<const CachedSchedule*> cached = scheduleFor(call, choice);
    if (cached.ok()) {
      planFlight(choice, &cached.value()->program);
      void* output = call.output;
      // A tree reduce keeps partial results in the output of inner nodes; a
      // non-root's own output must stay untouched, so it gets scratch.
      if (call.collective == Collective::kReduce && rank != call.root &&
          choice.algorithm == algo::Algorithm::kTree) {
        scratch.resize(std::max(scratch.size(), call.count * elemBytes));
        output = scratch.data();
      }
      exec::HostCall hostCall{call.input, output, elemBytes, op, trace.get(), flight->hostWaits()};
      s = exec::runOnHost(cached.value()->program, hostCall, cached.value()->connections,
                          waitContext());
    } else {
      s = cached.status();
    }
  }
  traceCall(call, choice, nchannels, traceStart);
  if (!s.ok()) {
    s = explainFailure(s);
    broken = s;
    BRAID_WARN("%s (%s, %s) failed: %s", collectiveName(call.collective),
               algo::algorithmName(choice.algorithm), algo::protocolName(choice.protocol),
               s.message().c_str());
    return s;
  }
  // avg divides once, on the part of the result this rank holds: a
  // schedule's program does it as its last instructions, the one-shot and
  // the deterministic ring here.
  const bool scheduled = choice.algorithm != algo::Algorithm::kOneShot && !deterministicRing;
  if (!scheduled && (call.collective != Collective::kReduce || rank == call.root)) {
    if (reduces(call.collective)) op.finishOutput(call.output, call.count);
  }
  return Status::success();
}

Result<double> Comm::estimateUs(Collective collective, size_t count, DataType type) const {
  BRAID_TRY(checkDataType(type));
  if (count == 0) return 0.0;
  Impl::CollCall call{collective, nullptr, nullptr, count, type, RedOp::kSum, 0};
  BRAID_ASSIGN_OR_RETURN(const tune::Choice choice, impl_->choose(call));
  return choice.predictedUs;
}

Status Comm::allReduce(const void* input, void* output, size_t count, DataType type, RedOp op,
                       void* stream) {
  ActiveCall active(impl_->activeCalls);
  log::ScopedLogRank logRank(impl_->rank);
  BRAID_TRY(checkBuffers(input, output, count));
  Impl::CollCall call{Collective::kAllReduce, input, output, count, type, op, -1};
  call.stream = stream;
  return impl_->runCollective(call);
}

Status Comm::reduceScatter(const void* input, void* output, size_t recvCount, DataType type,
                           RedOp op, void* stream) {
  ActiveCall active(impl_->activeCalls);
  log::ScopedLogRank logRank(impl_->rank);
  BRAID_TRY(checkBuffers(input, output, recvCount));
  Impl::CollCall call{Collective::kReduceScatter, input, output, recvCount, type, op, -1};
  call.stream = stream;
  return impl_->runCollective(call);
}

Status Comm::allGather(const void* input, void* output, size_t sendCount, DataType type,
                       void* stream) {
  ActiveCall active(impl_->activeCalls);
  log::ScopedLogRank logRank(impl_->rank);
  BRAID_TRY(checkBuffers(input, output, sendCount));
  Impl::CollCall call{Collective::kAllGather, input, output, sendCount, type, RedOp::kSum, -1};
  call.stream = stream;
  return impl_->runCollective(call);
}

Status Comm::broadcast(const void* input, void* output, size_t count, DataType type, int root,
                       void* stream) {
  ActiveCall active(impl_->activeCalls);
  log::ScopedLogRank logRank(impl_->rank);
  // Only the root reads an input.
  BRAID_TRY(checkBuffers(impl_->rank == root ? input : output, output, count));
  Impl::CollCall call{Collective::kBroadcast, input, output, count, type, RedOp::kSum, root};
  call.stream = stream;
  return impl_->runCollective(call);
}

Status Comm::reduce(const void* input, void* output, size_t count, DataType type, RedOp op,
                    int root, void* stream) {
  ActiveCall active(impl_->activeCalls);
  log::ScopedLogRank logRank(impl_->rank);
  // Only the root writes an output.
  BRAID_TRY(checkBuffers(input, impl_->rank == root ? output : input, count));
  Impl::CollCall call{Collective::kReduce, input, output, count, type, op, root};
  call.stream = stream;
  return impl_->runCollective(call);
}

Result<RedOp> Comm::createPreMulSum(const void* scalar, DataType type, bool scalarByPointer) {
  BRAID_TRY(checkDataType(type));
  if (scalar == nullptr) return invalidArgument("scalar is NULL");
  UserOp u;
  u.type = type;
  u.byPointer = scalarByPointer;
  u.pointer = scalar;
  if (!scalarByPointer) memcpy(u.value, scalar, dataTypeSize(type));
  auto& ops = impl_->userOps;
  size_t index = 0;
  while (index < ops.size() && ops[index]) ++index;
  if (index == ops.size()) ops.emplace_back();
  ops[index] = u;
  return static_cast<RedOp>(kFirstUserOp + static_cast<int>(index));
}

Status Comm::destroyOp(RedOp op) {
  int o = static_cast<int>(op);
  size_t index = static_cast<size_t>(o - kFirstUserOp);
  if (o < kFirstUserOp || index >= impl_->userOps.size() || !impl_->userOps[index]) {
    // Name the op as the caller knows it: NCCL's handles start at ncclNumOps.
    return invalidArgument("op " + std::to_string(o - kFirstUserOp + kNumRedOps) +
                           " is not a live ncclRedOpCreatePreMulSum op of this communicator");
  }
  impl_->userOps[index].reset();
  return Status::success();
}

}  // namespace braid
