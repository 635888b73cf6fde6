// The data-moving calls of the C API: argument checks, then braid::Comm.
//
// Host communicators complete every call before it returns, whatever the
// stream; stream == NULL is the documented way to ask for that.
#include <string>

#include "api/group.h"

using braid::Comm;
using braid::Status;
using braid::api::report;

namespace {

// Checks common to every collective; fills comm, type.
Status checkCall(ncclComm_t handle, const void* send, const void* recv, size_t count,
                 ncclDataType_t datatype, Comm** comm, braid::DataType* type) {
  BRAID_ASSIGN_OR_RETURN(*comm, braid::api::commFrom(handle));
  BRAID_ASSIGN_OR_RETURN(*type, braid::api::dataTypeFrom(datatype));
  if (count > 0 && send == nullptr)
    return braid::invalidArgument("sendbuff is NULL with count > 0");
  if (count > 0 && recv == nullptr)
    return braid::invalidArgument("recvbuff is NULL with count > 0");
  return Status::success();
}

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  (void)stream;
  Comm* c = nullptr;
  braid::DataType type{};
  Status s = checkCall(comm, sendbuff, recvbuff, count, datatype, &c, &type);
  if (!s.ok()) return report(s.withContext("ncclAllReduce"));
  auto redOp = braid::api::redOpFrom(op);
  if (!redOp.ok()) return report(redOp.status().withContext("ncclAllReduce"));
  auto run = [=] {
    return c->allReduce(sendbuff, recvbuff, count, type, redOp.value())
        .withContext("ncclAllReduce");
  };
  // Outside a group the call runs at once, without the std::function of the queue.
  if (braid::api::groupDepth() == 0) return report(run());
  return braid::api::runOrDefer(c, run);
}

// The collectives below come with the issue that implements every collective
// on the CPU path; until then they fail loudly.
BRAID_NCCL_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
               cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)op, (void)root, (void)comm,
      (void)stream;
  return braid::api::notImplemented("ncclReduce", "planned with the other collectives");
}

BRAID_NCCL_API(ncclResult_t, ncclBcast, void* buff, size_t count, ncclDataType_t datatype, int root,
               ncclComm_t comm, cudaStream_t stream) {
  (void)buff, (void)count, (void)datatype, (void)root, (void)comm, (void)stream;
  return braid::api::notImplemented("ncclBcast", "planned with the other collectives");
}

BRAID_NCCL_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)root, (void)comm, (void)stream;
  return braid::api::notImplemented("ncclBroadcast", "planned with the other collectives");
}

BRAID_NCCL_API(ncclResult_t, ncclReduceScatter, const void* sendbuff, void* recvbuff,
               size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
               cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)recvcount, (void)datatype, (void)op, (void)comm,
      (void)stream;
  return braid::api::notImplemented("ncclReduceScatter", "planned with the other collectives");
}

BRAID_NCCL_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff, size_t sendcount,
               ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)sendcount, (void)datatype, (void)comm, (void)stream;
  return braid::api::notImplemented("ncclAllGather", "planned with the other collectives");
}

BRAID_NCCL_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)comm, (void)stream;
  return braid::api::notImplemented("ncclAlltoAll", "planned with the other collectives");
}

BRAID_NCCL_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)root, (void)comm, (void)stream;
  return braid::api::notImplemented("ncclGather", "planned with the other collectives");
}

BRAID_NCCL_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)root, (void)comm, (void)stream;
  return braid::api::notImplemented("ncclScatter", "planned with the other collectives");
}
