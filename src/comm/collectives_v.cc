// The variable-count collectives of braid::Comm (braid_ext.h): all-gather
// and reduce-scatter with a block of its own size and place per rank, and
// all-to-all with a count and place per pair of ranks.
//
// All-gather-v and reduce-scatter-v are CollectiveCalls with blockCounts / blockOffsets: checked
// as every collective is (call_arguments.h), they run the ring schedules of their uniform twins
// (algo/ring.h) through Calls::run (calls.h): the schedule cache (keyed by the blocks too), the
// operator (avg's division on this rank's block, premulsum's scalar) and the error handling are
// the uniform ones. All-to-all-v is a batch of sends and receives, as Comm::allToAll is.
#include <algorithm>
#include <string>

#include "comm/call_arguments.h"
#include "comm/comm_impl.h"
#include "comm/p2p_batches.h"

namespace braid {

Status Comm::allGatherV(const void* input, size_t sendCount, void* output, const size_t* recvCounts,
                        const size_t* displs, DataType type, void* stream) {
  return runCollective(CollectiveCall{Collective::kAllGather, input, output, sendCount, type,
                                      RedOp::kSum, -1, recvCounts, displs, stream, true});
}

Status Comm::reduceScatterV(const void* input, const size_t* sendCounts, const size_t* displs,
                            void* output, size_t recvCount, DataType type, RedOp op, void* stream) {
  return runCollective(CollectiveCall{Collective::kReduceScatter, input, output, recvCount, type,
                                      op, -1, sendCounts, displs, stream, true});
}

Result<double> Comm::estimateVUs(Collective collective, const size_t* counts, DataType type) const {
  if (collective != Collective::kAllGather && collective != Collective::kReduceScatter) {
    return invalidArgument(std::string("estimateVUs: ") + collectiveName(collective) +
                           " has no variable-count form");
  }
  BRAID_TRY(comm::checkDataType(type));
  if (counts == nullptr) return invalidArgument("counts is NULL");
  CollectiveCall call{collective, nullptr, nullptr, counts[rank()], type, RedOp::kSum, -1};
  call.blockCounts = counts;
  call.variableCounts = true;
  // An empty call returns at once, as estimateUs says of a count of 0.
  if (std::all_of(counts, counts + size(), [](size_t c) { return c == 0; })) return 0.0;
  BRAID_ASSIGN_OR_RETURN(const tune::Choice choice, impl_->selector->choose(call));
  return choice.predictedUs;
}

Result<CheckedBatch> Comm::checkAllToAllV(const void* input, const size_t* sendCounts,
                                          const size_t* sendDispls, void* output,
                                          const size_t* recvCounts, const size_t* recvDispls,
                                          DataType type) const {
  const int n = size();
  BRAID_TRY(comm::checkAllToAllVArguments(input, sendCounts, sendDispls, output, recvCounts,
                                          recvDispls, type, n));
  return checkSendRecv(
      allToAllVBatch(n, input, sendCounts, sendDispls, output, recvCounts, recvDispls, type));
}

Status Comm::allToAllV(const void* input, const size_t* sendCounts, const size_t* sendDispls,
                       void* output, const size_t* recvCounts, const size_t* recvDispls,
                       DataType type, void* stream) {
  BRAID_ASSIGN_OR_RETURN(
      const CheckedBatch batch,
      checkAllToAllV(input, sendCounts, sendDispls, output, recvCounts, recvDispls, type));
  return sendRecv(batch, stream);
}

}  // namespace braid
