// braid::Comm's collectives: each checks its buffers, counts itself as running (abort waits
// for it) and hands the call to Calls (calls.h), which runs it.
#include <cstring>
#include <string>

#include "base/log.h"
#include "comm/comm_impl.h"

namespace braid {

using comm::ActiveCall;
using comm::checkDataType;
using comm::CollCall;

namespace {

Status checkBuffers(const void* input, const void* output, size_t count) {
  if (count == 0) return Status::success();
  if (input == nullptr) return invalidArgument("send buffer is NULL with count > 0");
  if (output == nullptr) return invalidArgument("receive buffer is NULL with count > 0");
  return Status::success();
}

}  // namespace

Result<double> Comm::estimateUs(Collective collective, size_t count, DataType type) const {
  BRAID_TRY(checkDataType(type));
  if (count == 0) return 0.0;
  CollCall call{collective, nullptr, nullptr, count, type, RedOp::kSum, 0};
  BRAID_ASSIGN_OR_RETURN(const tune::Choice choice, impl_->selector->choose(call));
  return choice.predictedUs;
}

Status Comm::allReduce(const void* input, void* output, size_t count, DataType type, RedOp op,
                       void* stream) {
  ActiveCall active = impl_->health.countCall();
  log::ScopedLogRank logRank(rank());
  BRAID_TRY(checkBuffers(input, output, count));
  CollCall call{Collective::kAllReduce, input, output, count, type, op, -1};
  call.stream = stream;
  return impl_->calls.run(call);
}

Status Comm::reduceScatter(const void* input, void* output, size_t recvCount, DataType type,
                           RedOp op, void* stream) {
  ActiveCall active = impl_->health.countCall();
  log::ScopedLogRank logRank(rank());
  BRAID_TRY(checkBuffers(input, output, recvCount));
  CollCall call{Collective::kReduceScatter, input, output, recvCount, type, op, -1};
  call.stream = stream;
  return impl_->calls.run(call);
}

Status Comm::allGather(const void* input, void* output, size_t sendCount, DataType type,
                       void* stream) {
  ActiveCall active = impl_->health.countCall();
  log::ScopedLogRank logRank(rank());
  BRAID_TRY(checkBuffers(input, output, sendCount));
  CollCall call{Collective::kAllGather, input, output, sendCount, type, RedOp::kSum, -1};
  call.stream = stream;
  return impl_->calls.run(call);
}

Status Comm::broadcast(const void* input, void* output, size_t count, DataType type, int root,
                       void* stream) {
  ActiveCall active = impl_->health.countCall();
  log::ScopedLogRank logRank(rank());
  // Only the root reads an input.
  BRAID_TRY(checkBuffers(rank() == root ? input : output, output, count));
  CollCall call{Collective::kBroadcast, input, output, count, type, RedOp::kSum, root};
  call.stream = stream;
  return impl_->calls.run(call);
}

Status Comm::reduce(const void* input, void* output, size_t count, DataType type, RedOp op,
                    int root, void* stream) {
  ActiveCall active = impl_->health.countCall();
  log::ScopedLogRank logRank(rank());
  // Only the root writes an output.
  BRAID_TRY(checkBuffers(input, rank() == root ? output : input, count));
  CollCall call{Collective::kReduce, input, output, count, type, op, root};
  call.stream = stream;
  return impl_->calls.run(call);
}

Result<RedOp> Comm::createPreMulSum(const void* scalar, DataType type, bool scalarByPointer) {
  BRAID_TRY(checkDataType(type));
  return impl_->calls.userOps.create(scalar, type, scalarByPointer);
}

Status Comm::destroyOp(RedOp op) { return impl_->calls.userOps.destroy(op); }

}  // namespace braid
