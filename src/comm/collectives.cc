// braid::Comm's collectives: each is one CollectiveCall, checked once (call_arguments.h),
// counted as running (abort waits for it) and handed to Calls (calls.h), which runs it.
#include <string>
#include <utility>

#include "base/log.h"
#include "comm/call_arguments.h"
#include "comm/comm_impl.h"

namespace braid {

using comm::ActiveCall;
using comm::checkDataType;

Result<double> Comm::estimateUs(Collective collective, size_t count, DataType type) const {
  BRAID_TRY(checkDataType(type));
  if (count == 0) return 0.0;
  CollectiveCall call{collective, nullptr, nullptr, count, type, RedOp::kSum, 0};
  BRAID_ASSIGN_OR_RETURN(const tune::Choice choice, impl_->selector->choose(call));
  return choice.predictedUs;
}

void Comm::setWindowLookup(WindowLookup lookup) { impl_->calls.setWindowLookup(std::move(lookup)); }

Result<CheckedCollective> Comm::checkCollective(const CollectiveCall& call) const {
  BRAID_TRY(comm::checkArguments(call, rank(), size()));
  return CheckedCollective(call);
}

Status Comm::runCollective(const CheckedCollective& checked) {
  const gpu::DeviceGuard keep = impl_->keepCallersDevice();
  ActiveCall active = impl_->health.countCall();
  log::ScopedLogRank logRank(rank());
  return impl_->calls.run(checked.call());
}

// checkCollective and runCollective(CheckedCollective) without the token between them, which a
// tiny call would pay for.
Status Comm::runCollective(const CollectiveCall& call) {
  BRAID_TRY(comm::checkArguments(call, impl_->members.rank, impl_->members.nranks));
  const gpu::DeviceGuard keep = impl_->keepCallersDevice();
  ActiveCall active = impl_->health.countCall();
  log::ScopedLogRank logRank(impl_->members.rank);
  return impl_->calls.run(call);
}

Status Comm::allReduce(const void* input, void* output, size_t count, DataType type, RedOp op,
                       void* stream) {
  return runCollective(
      CollectiveCall{Collective::kAllReduce, input, output, count, type, op, -1, {}, {}, stream});
}

Status Comm::reduceScatter(const void* input, void* output, size_t recvCount, DataType type,
                           RedOp op, void* stream) {
  return runCollective(CollectiveCall{
      Collective::kReduceScatter, input, output, recvCount, type, op, -1, {}, {}, stream});
}

Status Comm::allGather(const void* input, void* output, size_t sendCount, DataType type,
                       void* stream) {
  return runCollective(CollectiveCall{
      Collective::kAllGather, input, output, sendCount, type, RedOp::kSum, -1, {}, {}, stream});
}

Status Comm::broadcast(const void* input, void* output, size_t count, DataType type, int root,
                       void* stream) {
  return runCollective(CollectiveCall{
      Collective::kBroadcast, input, output, count, type, RedOp::kSum, root, {}, {}, stream});
}

Status Comm::reduce(const void* input, void* output, size_t count, DataType type, RedOp op,
                    int root, void* stream) {
  return runCollective(
      CollectiveCall{Collective::kReduce, input, output, count, type, op, root, {}, {}, stream});
}

Result<RedOp> Comm::createPreMulSum(const void* scalar, DataType type, bool scalarByPointer) {
  BRAID_TRY(checkDataType(type));
  return impl_->calls.createPreMulSum(scalar, type, scalarByPointer);
}

Status Comm::destroyOp(RedOp op) { return impl_->calls.destroyOp(op); }

}  // namespace braid
