// The ring collectives of braid::Comm: each builds (or reuses) the rank's
// Schedule, runs it on the host executor, and applies the operator's final
// step (avg's division) to the part of the result this rank holds.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "algo/ring.h"
#include "comm_impl.h"
#include "kernels/host_reduce.h"
#include "util/log.h"

namespace braid {
namespace {

// Below this a slice's hand-off (two cache-line transfers, ~0.2 us) costs
// more than the copy it would overlap (16 KiB at ~10 GB/s is ~1.6 us).
constexpr size_t kMinSliceBytes = 16 << 10;

bool reduces(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduceScatter || c == Collective::kReduce;
}

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

// Variable-count calls are cached too, by their blocks: a training step
// repeats them with the same counts as often as the uniform ones.
Result<const algo::Schedule*> Comm::Impl::ringSchedule(const RingCall& call) {
  const size_t elemBytes = dataTypeSize(call.type);
  for (const auto& c : scheduleCache) {
    if (c.collective == call.collective && c.count == call.count && c.elemBytes == elemBytes &&
        c.root == call.root && sameBlocks(c.blockCounts, call.blockCounts, nranks) &&
        sameBlocks(c.blockOffsets, call.blockOffsets, nranks)) {
      return &c.schedule;
    }
  }
  algo::RingParams p;
  p.nranks = nranks;
  p.rank = rank;
  p.order = ring;
  p.count = call.count;
  p.nchannels = static_cast<int>(channels.size());
  // A round fills half the FIFO, so a step never waits on the receiver's room
  // for its first slice, and the other half lets the next round start early.
  p.chunkElems = std::max<size_t>(1, slotBytes * (transport::kFifoSlots / 2) / elemBytes);
  p.maxSliceElems = std::max<size_t>(1, slotBytes / elemBytes);
  p.minSliceElems = std::max<size_t>(1, kMinSliceBytes / elemBytes);
  if (call.blockCounts != nullptr) {
    p.blockCounts.assign(call.blockCounts, call.blockCounts + nranks);
    p.blockOffsets.assign(call.blockOffsets, call.blockOffsets + nranks);
  }
  Result<algo::Schedule> made = invalidArgument("no ring schedule for this collective");
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
  if (!made.ok()) return made.status();
  if (config.dumpSchedule) {
    fprintf(stderr, "[rank %d] %s", rank, algo::formatSchedule(made.value(), call.type).c_str());
  }
  // A handful of entries covers the collectives a training step repeats.
  constexpr size_t kCacheEntries = 8;
  if (scheduleCache.size() >= kCacheEntries) scheduleCache.erase(scheduleCache.begin());
  scheduleCache.push_back({call.collective, call.count, elemBytes, call.root,
                           std::move(p.blockCounts), std::move(p.blockOffsets),
                           std::move(made).value()});
  return &scheduleCache.back().schedule;
}

Result<kernels::HostOp> Comm::Impl::hostOpFor(DataType type, RedOp op) {
  kernels::OpArgs args;
  args.nranks = nranks;
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
    // A scalar given by pointer is read when the collective runs, as NCCL
    // reads a device scalar when the kernel runs.
    memcpy(args.scalar, u.byPointer ? u.pointer : u.value, dataTypeSize(type));
    return kernels::hostOp(type, RedOp::kPreMulSum, args);
  }
  if (o < 0 || o >= kNumRedOps) return invalidArgument("unknown reduction op " + std::to_string(o));
  return kernels::hostOp(type, op, args);
}

Status Comm::Impl::runRing(const RingCall& call) {
  BRAID_TRY(checkDataType(call.type));
  const bool rooted =
      call.collective == Collective::kBroadcast || call.collective == Collective::kReduce;
  if (rooted) BRAID_TRY(checkRank(call.root, nranks, "root"));
  BRAID_TRY(checkUsable());
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
  BRAID_ASSIGN_OR_RETURN(const algo::Schedule* schedule, ringSchedule(call));
  exec::HostCall hostCall{call.input, call.output, dataTypeSize(call.type), op};
  Status s = exec::runOnHost(*schedule, hostCall, connections, waitContext());
  if (!s.ok()) {
    broken = s;
    BRAID_WARN("%s failed: %s", collectiveName(call.collective), s.message().c_str());
    return s;
  }
  // avg divides once, on the part of the result this rank holds.
  if (call.collective != Collective::kReduce || rank == call.root) {
    if (reduces(call.collective)) op.finishOutput(call.output, call.count);
  }
  return Status::success();
}

Status Comm::allReduce(const void* input, void* output, size_t count, DataType type, RedOp op) {
  ActiveCall active(impl_->activeCalls);
  log::ScopedLogRank logRank(impl_->rank);
  BRAID_TRY(checkBuffers(input, output, count));
  return impl_->runRing({Collective::kAllReduce, input, output, count, type, op, -1});
}

Status Comm::reduceScatter(const void* input, void* output, size_t recvCount, DataType type,
                           RedOp op) {
  ActiveCall active(impl_->activeCalls);
  log::ScopedLogRank logRank(impl_->rank);
  BRAID_TRY(checkBuffers(input, output, recvCount));
  return impl_->runRing({Collective::kReduceScatter, input, output, recvCount, type, op, -1});
}

Status Comm::allGather(const void* input, void* output, size_t sendCount, DataType type) {
  ActiveCall active(impl_->activeCalls);
  log::ScopedLogRank logRank(impl_->rank);
  BRAID_TRY(checkBuffers(input, output, sendCount));
  return impl_->runRing({Collective::kAllGather, input, output, sendCount, type, RedOp::kSum, -1});
}

Status Comm::broadcast(const void* input, void* output, size_t count, DataType type, int root) {
  ActiveCall active(impl_->activeCalls);
  log::ScopedLogRank logRank(impl_->rank);
  // Only the root reads an input.
  BRAID_TRY(checkBuffers(impl_->rank == root ? input : output, output, count));
  return impl_->runRing({Collective::kBroadcast, input, output, count, type, RedOp::kSum, root});
}

Status Comm::reduce(const void* input, void* output, size_t count, DataType type, RedOp op,
                    int root) {
  ActiveCall active(impl_->activeCalls);
  log::ScopedLogRank logRank(impl_->rank);
  // Only the root writes an output.
  BRAID_TRY(checkBuffers(input, impl_->rank == root ? output : input, count));
  return impl_->runRing({Collective::kReduce, input, output, count, type, op, root});
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
