// The variable-count collectives of braid::Comm (braid_ext.h): all-gather
// and reduce-scatter with a block of its own size and place per rank, and
// all-to-all with a count and place per pair of ranks.
//
// All-gather-v and reduce-scatter-v run the ring schedules of their uniform
// twins with CollCall::blockCounts / blockOffsets (algo/ring.h), through
// Calls::run (calls.h): the schedule cache (keyed by the blocks too), the
// operator (avg's division on this rank's block, premulsum's scalar) and
// the error handling are the uniform ones. All-to-all-v is a batch of sends
// and receives, as Comm::allToAll is.
//
// The checks here are those a rank can make alone: arrays present, this
// rank's count consistent, extents addressable, and no aliasing the
// schedule cannot honour (overlapping output blocks, a send buffer that
// overlaps the receive buffer other than in the documented in-place form).
// That every rank passes the same counts is the caller's contract; a
// mismatch shows as a slice-size error or a timeout, as with uniform counts.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/log.h"
#include "comm/comm_impl.h"
#include "comm/p2p_batches.h"

namespace braid {
namespace {

Result<size_t> elementBytes(DataType type) {
  BRAID_TRY(comm::checkDataType(type));
  return dataTypeSize(type);
}

Status checkArray(const size_t* array, const char* name) {
  if (array == nullptr) return invalidArgument(std::string(name) + " is NULL");
  return Status::success();
}

// Bytes from the start of a buffer to the end of its last block, checked
// for overflow; `what` names the arrays in messages.
Result<size_t> extentBytes(const size_t* counts, const size_t* displs, int nranks, size_t elemBytes,
                           const std::string& what) {
  constexpr size_t kMax = SIZE_MAX;
  size_t end = 0;
  for (int b = 0; b < nranks; ++b) {
    if (counts[b] == 0) continue;
    if (displs[b] > kMax - counts[b] || displs[b] + counts[b] > kMax / elemBytes) {
      return invalidArgument(what + ": block " + std::to_string(b) + " (displacement " +
                             std::to_string(displs[b]) + ", count " + std::to_string(counts[b]) +
                             ") ends past the addressable range");
    }
    end = std::max(end, displs[b] + counts[b]);
  }
  return end * elemBytes;
}

bool intersects(size_t aBegin, size_t aCount, size_t bBegin, size_t bCount) {
  return aCount > 0 && bCount > 0 && aBegin < bBegin + bCount && bBegin < aBegin + aCount;
}

// The first two non-empty blocks that share an element, as a message.
Status checkDisjoint(const size_t* counts, const size_t* displs, int nranks,
                     const std::string& buffer) {
  std::vector<int> blocks;
  for (int b = 0; b < nranks; ++b) {
    if (counts[b] > 0) blocks.push_back(b);
  }
  std::sort(blocks.begin(), blocks.end(), [&](int a, int b) { return displs[a] < displs[b]; });
  for (size_t i = 1; i < blocks.size(); ++i) {
    const int a = blocks[i - 1];
    const int b = blocks[i];
    if (intersects(displs[a], counts[a], displs[b], counts[b])) {
      return invalidArgument("blocks " + std::to_string(std::min(a, b)) + " and " +
                             std::to_string(std::max(a, b)) + " of " + buffer +
                             " overlap (displacements and counts describe overlapping ranges)");
    }
  }
  return Status::success();
}

// Whether byte ranges [a, a + aBytes) and [b, b + bBytes) share a byte.
bool overlaps(const void* a, size_t aBytes, const void* b, size_t bBytes) {
  const uintptr_t x = reinterpret_cast<uintptr_t>(a);
  const uintptr_t y = reinterpret_cast<uintptr_t>(b);
  return aBytes > 0 && bBytes > 0 && x < y + bBytes && y < x + aBytes;
}

// Element `elems` of a buffer; a NULL buffer (allowed where nothing is
// read or written) stays NULL.
const char* at(const void* base, size_t elems, size_t elemBytes) {
  return base == nullptr ? nullptr : static_cast<const char*>(base) + elems * elemBytes;
}

}  // namespace

Status Comm::allGatherV(const void* input, size_t sendCount, void* output, const size_t* recvCounts,
                        const size_t* displs, DataType type, void* stream) {
  comm::ActiveCall active = impl_->health.countCall();
  log::ScopedLogRank logRank(rank());
  const int n = size();
  const int me = rank();
  BRAID_ASSIGN_OR_RETURN(const size_t elem, elementBytes(type));
  BRAID_TRY(checkArray(recvCounts, "recvcounts"));
  BRAID_TRY(checkArray(displs, "displs"));
  if (sendCount != recvCounts[me]) {
    return invalidArgument("sendcount " + std::to_string(sendCount) + " differs from recvcounts[" +
                           std::to_string(me) + "] = " + std::to_string(recvCounts[me]) +
                           " (this rank's block)");
  }
  BRAID_ASSIGN_OR_RETURN(const size_t extent,
                         extentBytes(recvCounts, displs, n, elem, "recvcounts/displs"));
  if (sendCount > 0 && input == nullptr) {
    return invalidArgument("sendbuff is NULL with sendcount > 0");
  }
  if (extent > 0 && output == nullptr) {
    return invalidArgument("recvbuff is NULL with a recvcounts entry > 0");
  }
  BRAID_TRY(checkDisjoint(recvCounts, displs, n, "recvbuff"));
  const bool inPlace = sendCount > 0 && input == at(output, displs[me], elem);
  if (!inPlace && overlaps(input, sendCount * elem, output, extent)) {
    return invalidArgument("sendbuff overlaps recvbuff but is not recvbuff + displs[" +
                           std::to_string(me) + "] (the in-place form)");
  }
  comm::CollCall call{
      Collective::kAllGather, input, output, sendCount, type, RedOp::kSum, -1, recvCounts, displs};
  call.stream = stream;
  return impl_->calls.run(call);
}

Status Comm::reduceScatterV(const void* input, const size_t* sendCounts, const size_t* displs,
                            void* output, size_t recvCount, DataType type, RedOp op, void* stream) {
  comm::ActiveCall active = impl_->health.countCall();
  log::ScopedLogRank logRank(rank());
  const int n = size();
  const int me = rank();
  BRAID_ASSIGN_OR_RETURN(const size_t elem, elementBytes(type));
  BRAID_TRY(checkArray(sendCounts, "sendcounts"));
  BRAID_TRY(checkArray(displs, "displs"));
  if (recvCount != sendCounts[me]) {
    return invalidArgument("recvcount " + std::to_string(recvCount) + " differs from sendcounts[" +
                           std::to_string(me) + "] = " + std::to_string(sendCounts[me]) +
                           " (this rank's block)");
  }
  BRAID_ASSIGN_OR_RETURN(const size_t extent,
                         extentBytes(sendCounts, displs, n, elem, "sendcounts/displs"));
  if (extent > 0 && input == nullptr) {
    return invalidArgument("sendbuff is NULL with a sendcounts entry > 0");
  }
  if (recvCount > 0 && output == nullptr) {
    return invalidArgument("recvbuff is NULL with recvcount > 0");
  }
  const bool inPlace = recvCount > 0 && output == at(input, displs[me], elem);
  if (!inPlace && overlaps(output, recvCount * elem, input, extent)) {
    return invalidArgument("recvbuff overlaps sendbuff but is not sendbuff + displs[" +
                           std::to_string(me) + "] (the in-place form)");
  }
  // In place, this rank's block is overwritten while the others are still
  // read; out of place, blocks may share input elements (they are only read).
  for (int b = 0; inPlace && b < n; ++b) {
    if (b != me && intersects(displs[me], recvCount, displs[b], sendCounts[b])) {
      return invalidArgument("in place, block " + std::to_string(me) +
                             " (this rank's, the output) overlaps block " + std::to_string(b) +
                             " of sendbuff");
    }
  }
  comm::CollCall call{
      Collective::kReduceScatter, input, output, recvCount, type, op, -1, sendCounts, displs};
  call.stream = stream;
  return impl_->calls.run(call);
}

Result<double> Comm::estimateVUs(Collective collective, const size_t* counts, DataType type) const {
  if (collective != Collective::kAllGather && collective != Collective::kReduceScatter) {
    return invalidArgument(std::string("estimateVUs: ") + collectiveName(collective) +
                           " has no variable-count form");
  }
  BRAID_TRY(comm::checkDataType(type));
  BRAID_TRY(checkArray(counts, "counts"));
  comm::CollCall call{collective, nullptr, nullptr, counts[rank()], type, RedOp::kSum, -1};
  call.blockCounts = counts;
  // An empty call returns at once, as estimateUs says of a count of 0.
  if (std::all_of(counts, counts + size(), [](size_t c) { return c == 0; })) return 0.0;
  BRAID_ASSIGN_OR_RETURN(const tune::Choice choice, impl_->selector->choose(call));
  return choice.predictedUs;
}

Status Comm::allToAllV(const void* input, const size_t* sendCounts, const size_t* sendDispls,
                       void* output, const size_t* recvCounts, const size_t* recvDispls,
                       DataType type, void* stream) {
  const int n = size();
  BRAID_ASSIGN_OR_RETURN(const size_t elem, elementBytes(type));
  BRAID_TRY(checkArray(sendCounts, "sendcounts"));
  BRAID_TRY(checkArray(sendDispls, "sdispls"));
  BRAID_TRY(checkArray(recvCounts, "recvcounts"));
  BRAID_TRY(checkArray(recvDispls, "rdispls"));
  BRAID_ASSIGN_OR_RETURN(const size_t sendExtent,
                         extentBytes(sendCounts, sendDispls, n, elem, "sendcounts/sdispls"));
  BRAID_ASSIGN_OR_RETURN(const size_t recvExtent,
                         extentBytes(recvCounts, recvDispls, n, elem, "recvcounts/rdispls"));
  if (sendExtent > 0 && input == nullptr) {
    return invalidArgument("sendbuff is NULL with a sendcounts entry > 0");
  }
  if (recvExtent > 0 && output == nullptr) {
    return invalidArgument("recvbuff is NULL with a recvcounts entry > 0");
  }
  BRAID_TRY(checkDisjoint(recvCounts, recvDispls, n, "recvbuff"));
  // The sends of the batch read while its receives write, in any order.
  if (overlaps(input, sendExtent, output, recvExtent)) {
    return invalidArgument("sendbuff and recvbuff overlap (all-to-all-v has no in-place form)");
  }
  return sendRecv(
      allToAllVBatch(n, input, sendCounts, sendDispls, output, recvCounts, recvDispls, type),
      stream);
}

}  // namespace braid
