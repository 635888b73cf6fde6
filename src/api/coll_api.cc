// The data-moving calls of the C API: each translated and run on the path every collective
// shares (collective_call.h), where braid::Comm checks it once.
//
// Host communicators complete every call before it returns, whatever the
// stream; stream == NULL is the documented way to ask for that. GPU
// communicators enqueue the call on the stream and return.
#include "api/collective_call.h"

using braid::Collective;
using braid::Comm;
using braid::api::runBatch;
using braid::api::runCollective;

// The five collectives: one CollectiveCall each, on the path every collective shares
// (collective_call.h). Only reducing collectives read `op`.
BRAID_NCCL_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return runCollective(
      "ncclAllReduce", comm, datatype, op,
      {Collective::kAllReduce, sendbuff, recvbuff, count, {}, {}, -1, {}, {}, stream});
}

BRAID_NCCL_API(ncclResult_t, ncclReduceScatter, const void* sendbuff, void* recvbuff,
               size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
               cudaStream_t stream) {
  return runCollective(
      "ncclReduceScatter", comm, datatype, op,
      {Collective::kReduceScatter, sendbuff, recvbuff, recvcount, {}, {}, -1, {}, {}, stream});
}

BRAID_NCCL_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff, size_t sendcount,
               ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return runCollective(
      "ncclAllGather", comm, datatype, ncclSum,
      {Collective::kAllGather, sendbuff, recvbuff, sendcount, {}, {}, -1, {}, {}, stream});
}

BRAID_NCCL_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return runCollective(
      "ncclBroadcast", comm, datatype, ncclSum,
      {Collective::kBroadcast, sendbuff, recvbuff, count, {}, {}, root, {}, {}, stream});
}

BRAID_NCCL_API(ncclResult_t, ncclBcast, void* buff, size_t count, ncclDataType_t datatype, int root,
               ncclComm_t comm, cudaStream_t stream) {
  // The in-place broadcast, as NCCL defines it.
  return pncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

BRAID_NCCL_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
               cudaStream_t stream) {
  return runCollective(
      "ncclReduce", comm, datatype, op,
      {Collective::kReduce, sendbuff, recvbuff, count, {}, {}, root, {}, {}, stream});
}

// Gather, scatter and all-to-all run as checked batches of sends and receives (Comm::gather,
// ...); in a group they run in issue order with the rest.
BRAID_NCCL_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return runBatch("ncclAlltoAll", comm, datatype, stream, [&](Comm* c, braid::DataType type) {
    return c->checkAllToAll(sendbuff, recvbuff, count, type);
  });
}

BRAID_NCCL_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return runBatch("ncclGather", comm, datatype, stream, [&](Comm* c, braid::DataType type) {
    return c->checkGather(sendbuff, recvbuff, count, type, root);
  });
}

BRAID_NCCL_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return runBatch("ncclScatter", comm, datatype, stream, [&](Comm* c, braid::DataType type) {
    return c->checkScatter(sendbuff, recvbuff, count, type, root);
  });
}
