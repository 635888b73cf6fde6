// braid's variable-count collectives (include/braid_ext.h), on the path every collective of the
// C API shares (collective_call.h): braid::Comm checks each once, at the call, also inside a
// group, where all-gather-v and reduce-scatter-v copy their arrays so the caller may reuse them
// at once, as it may reuse the count argument of any NCCL call. All-to-all-v becomes its batch
// of sends and receives at the call, which needs the arrays no longer.
//
// These are braid's own symbols: no pbraid* twins, since no profiler
// interposes names NCCL does not have (the export map exports braid*).
#include "api/collective_call.h"
#include "braid_ext.h"

using braid::Collective;
using braid::Comm;
using braid::api::runBatch;
using braid::api::runCollective;

ncclResult_t braidAllGatherV(const void* sendbuff, size_t sendcount, void* recvbuff,
                             const size_t* recvcounts, const size_t* displs,
                             ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return runCollective("braidAllGatherV", comm, datatype, ncclSum,
                       {Collective::kAllGather,
                        sendbuff,
                        recvbuff,
                        sendcount,
                        {},
                        {},
                        -1,
                        recvcounts,
                        displs,
                        stream,
                        true});
}

ncclResult_t braidReduceScatterV(const void* sendbuff, const size_t* sendcounts,
                                 const size_t* displs, void* recvbuff, size_t recvcount,
                                 ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                 cudaStream_t stream) {
  return runCollective("braidReduceScatterV", comm, datatype, op,
                       {Collective::kReduceScatter,
                        sendbuff,
                        recvbuff,
                        recvcount,
                        {},
                        {},
                        -1,
                        sendcounts,
                        displs,
                        stream,
                        true});
}

ncclResult_t braidAlltoAllV(const void* sendbuff, const size_t* sendcounts, const size_t* sdispls,
                            void* recvbuff, const size_t* recvcounts, const size_t* rdispls,
                            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return runBatch("braidAlltoAllV", comm, datatype, stream, [&](Comm* c, braid::DataType type) {
    return c->checkAllToAllV(sendbuff, sendcounts, sdispls, recvbuff, recvcounts, rdispls, type);
  });
}
