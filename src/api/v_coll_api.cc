// braid's variable-count collectives (include/braid_ext.h): argument checks,
// then braid::Comm::allGatherV / reduceScatterV / allToAllV.
//
// The checks here are the ones that fail the call itself, also inside a
// group: the communicator, the datatype and operator, NULL arrays, this
// rank's count against its array entry, NULL buffers. The Comm checks the
// layout (overlaps, addressable extents) when the operation runs. In a group
// the arrays are copied at the call, so the caller may reuse them at once,
// as it may reuse the count argument of any NCCL call.
//
// These are braid's own symbols: no pbraid* twins, since no profiler
// interposes names NCCL does not have (the export map exports braid*).
#include <string>
#include <vector>

#include "api/group.h"
#include "braid_ext.h"
#include "comm/p2p_batches.h"

using braid::Comm;
using braid::Status;
using braid::api::report;

namespace {

Status checkCommAndType(ncclComm_t handle, ncclDataType_t datatype, Comm** comm,
                        braid::DataType* type) {
  BRAID_ASSIGN_OR_RETURN(*comm, braid::api::commFrom(handle));
  BRAID_ASSIGN_OR_RETURN(*type, braid::api::dataTypeFrom(datatype));
  return Status::success();
}

Status checkArray(const size_t* array, const char* name) {
  if (array == nullptr) return braid::invalidArgument(std::string(name) + " is NULL");
  return Status::success();
}

bool anyNonZero(const size_t* counts, int n) {
  for (int i = 0; i < n; ++i) {
    if (counts[i] != 0) return true;
  }
  return false;
}

// `count` (named countName) must equal counts[rank] (named arrayName).
Status checkOwnCount(size_t count, const char* countName, const size_t* counts,
                     const char* arrayName, int rank) {
  if (count == counts[rank]) return Status::success();
  return braid::invalidArgument(std::string(countName) + " " + std::to_string(count) +
                                " differs from " + arrayName + "[" + std::to_string(rank) +
                                "] = " + std::to_string(counts[rank]) + " (this rank's block)");
}

std::vector<size_t> copyOf(const size_t* array, int n) { return {array, array + n}; }

}  // namespace

ncclResult_t braidAllGatherV(const void* sendbuff, size_t sendcount, void* recvbuff,
                             const size_t* recvcounts, const size_t* displs,
                             ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  constexpr const char* kName = "braidAllGatherV";
  Comm* c = nullptr;
  braid::DataType type{};
  Status s = checkCommAndType(comm, datatype, &c, &type);
  if (s.ok()) s = checkArray(recvcounts, "recvcounts");
  if (s.ok()) s = checkArray(displs, "displs");
  if (s.ok()) s = checkOwnCount(sendcount, "sendcount", recvcounts, "recvcounts", c->rank());
  if (s.ok() && sendcount > 0 && sendbuff == nullptr) {
    s = braid::invalidArgument("sendbuff is NULL with sendcount > 0");
  }
  if (s.ok() && recvbuff == nullptr && anyNonZero(recvcounts, c->size())) {
    s = braid::invalidArgument("recvbuff is NULL with a recvcounts entry > 0");
  }
  if (!s.ok()) return report(s.withContext(kName));
  if (braid::api::groupDepth() == 0) {
    return report(c->allGatherV(sendbuff, sendcount, recvbuff, recvcounts, displs, type, stream)
                      .withContext(kName));
  }
  auto counts = copyOf(recvcounts, c->size());
  return braid::api::runOrDefer(
      c,
      [=, offsets = copyOf(displs, c->size())] {
        return c
            ->allGatherV(sendbuff, sendcount, recvbuff, counts.data(), offsets.data(), type, stream)
            .withContext(kName);
      },
      [=] { return c->estimateVUs(braid::Collective::kAllGather, counts.data(), type); });
}

ncclResult_t braidReduceScatterV(const void* sendbuff, const size_t* sendcounts,
                                 const size_t* displs, void* recvbuff, size_t recvcount,
                                 ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                 cudaStream_t stream) {
  constexpr const char* kName = "braidReduceScatterV";
  Comm* c = nullptr;
  braid::DataType type{};
  Status s = checkCommAndType(comm, datatype, &c, &type);
  auto redOp = braid::api::redOpFrom(op);
  if (s.ok()) s = redOp.status();
  if (s.ok()) s = checkArray(sendcounts, "sendcounts");
  if (s.ok()) s = checkArray(displs, "displs");
  if (s.ok()) s = checkOwnCount(recvcount, "recvcount", sendcounts, "sendcounts", c->rank());
  if (s.ok() && sendbuff == nullptr && anyNonZero(sendcounts, c->size())) {
    s = braid::invalidArgument("sendbuff is NULL with a sendcounts entry > 0");
  }
  if (s.ok() && recvcount > 0 && recvbuff == nullptr) {
    s = braid::invalidArgument("recvbuff is NULL with recvcount > 0");
  }
  if (!s.ok()) return report(s.withContext(kName));
  if (braid::api::groupDepth() == 0) {
    return report(c->reduceScatterV(sendbuff, sendcounts, displs, recvbuff, recvcount, type,
                                    redOp.value(), stream)
                      .withContext(kName));
  }
  auto counts = copyOf(sendcounts, c->size());
  return braid::api::runOrDefer(
      c,
      [=, offsets = copyOf(displs, c->size())] {
        return c
            ->reduceScatterV(sendbuff, counts.data(), offsets.data(), recvbuff, recvcount, type,
                             redOp.value(), stream)
            .withContext(kName);
      },
      [=] { return c->estimateVUs(braid::Collective::kReduceScatter, counts.data(), type); });
}

ncclResult_t braidAlltoAllV(const void* sendbuff, const size_t* sendcounts, const size_t* sdispls,
                            void* recvbuff, const size_t* recvcounts, const size_t* rdispls,
                            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  constexpr const char* kName = "braidAlltoAllV";
  Comm* c = nullptr;
  braid::DataType type{};
  Status s = checkCommAndType(comm, datatype, &c, &type);
  if (s.ok()) s = checkArray(sendcounts, "sendcounts");
  if (s.ok()) s = checkArray(sdispls, "sdispls");
  if (s.ok()) s = checkArray(recvcounts, "recvcounts");
  if (s.ok()) s = checkArray(rdispls, "rdispls");
  if (s.ok() && sendbuff == nullptr && anyNonZero(sendcounts, c->size())) {
    s = braid::invalidArgument("sendbuff is NULL with a sendcounts entry > 0");
  }
  if (s.ok() && recvbuff == nullptr && anyNonZero(recvcounts, c->size())) {
    s = braid::invalidArgument("recvbuff is NULL with a recvcounts entry > 0");
  }
  if (!s.ok()) return report(s.withContext(kName));
  if (braid::api::groupDepth() == 0) {
    return report(
        c->allToAllV(sendbuff, sendcounts, sdispls, recvbuff, recvcounts, rdispls, type, stream)
            .withContext(kName));
  }
  const int n = c->size();
  auto sc = copyOf(sendcounts, n), sd = copyOf(sdispls, n);
  auto rc = copyOf(recvcounts, n), rd = copyOf(rdispls, n);
  return braid::api::runOrDefer(
      c,
      [=] {
        return c
            ->allToAllV(sendbuff, sc.data(), sd.data(), recvbuff, rc.data(), rd.data(), type,
                        stream)
            .withContext(kName);
      },
      [=] {
        return c->estimateP2pUs(braid::allToAllVBatch(n, sendbuff, sc.data(), sd.data(), recvbuff,
                                                      rc.data(), rd.data(), type));
      });
}
