// The data-moving calls of the C API: argument checks, then braid::Comm.
//
// Host communicators complete every call before it returns, whatever the
// stream; stream == NULL is the documented way to ask for that. GPU
// communicators enqueue the call on the stream and return.
#include <string>

#include "api/group.h"
#include "comm/p2p_batches.h"

using braid::Comm;
using braid::Status;
using braid::api::report;

namespace {

// Checks common to every collective; fills comm, type.
// Which buffers a call reads or writes on this rank.
enum class Uses { kBoth, kSendOnly, kRecvOnly };

// Checks common to every collective; fills comm, type. `uses` says which
// buffers this rank touches, so that an unused one may be NULL.
Status checkCall(ncclComm_t handle, const void* send, const void* recv, size_t count,
                 ncclDataType_t datatype, Comm** comm, braid::DataType* type,
                 Uses uses = Uses::kBoth) {
  BRAID_ASSIGN_OR_RETURN(*comm, braid::api::commFrom(handle));
  BRAID_ASSIGN_OR_RETURN(*type, braid::api::dataTypeFrom(datatype));
  if (count > 0 && send == nullptr && uses != Uses::kRecvOnly) {
    return braid::invalidArgument("sendbuff is NULL with count > 0");
  }
  if (count > 0 && recv == nullptr && uses != Uses::kSendOnly) {
    return braid::invalidArgument("recvbuff is NULL with count > 0");
  }
  return Status::success();
}

// Checks of a rooted call: the root, then checkCall with the buffers this
// rank touches: both at the root, `nonRootUses` elsewhere.
Status checkRootedCall(ncclComm_t handle, int root, const void* send, const void* recv,
                       size_t count, ncclDataType_t datatype, Uses nonRootUses, Comm** comm,
                       braid::DataType* type) {
  BRAID_ASSIGN_OR_RETURN(*comm, braid::api::commFrom(handle));
  if (root < 0 || root >= (*comm)->size()) {
    return braid::invalidArgument("root " + std::to_string(root) + " is outside [0, " +
                                  std::to_string((*comm)->size()) + ")");
  }
  return checkCall(handle, send, recv, count, datatype, comm, type,
                   (*comm)->rank() == root ? Uses::kBoth : nonRootUses);
}

// What ncclGroupSimulateEnd adds up for a collective queued in a group.
std::function<braid::Result<double>()> estimate(Comm* c, braid::Collective collective, size_t count,
                                                braid::DataType type) {
  return [=] { return c->estimateUs(collective, count, type); };
}

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  Comm* c = nullptr;
  braid::DataType type{};
  Status s = checkCall(comm, sendbuff, recvbuff, count, datatype, &c, &type);
  if (!s.ok()) return report(s.withContext("ncclAllReduce"));
  auto redOp = braid::api::redOpFrom(op);
  if (!redOp.ok()) return report(redOp.status().withContext("ncclAllReduce"));
  auto run = [=] {
    return c->allReduce(sendbuff, recvbuff, count, type, redOp.value(), stream)
        .withContext("ncclAllReduce");
  };
  // Outside a group the call runs at once, without the std::function of the queue.
  if (braid::api::groupDepth() == 0) return report(run());
  return braid::api::runOrDefer(c, run, estimate(c, braid::Collective::kAllReduce, count, type));
}

// Reduce-scatter, all-gather, broadcast and reduce: ring schedules.
BRAID_NCCL_API(ncclResult_t, ncclReduceScatter, const void* sendbuff, void* recvbuff,
               size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
               cudaStream_t stream) {
  Comm* c = nullptr;
  braid::DataType type{};
  Status s = checkCall(comm, sendbuff, recvbuff, recvcount, datatype, &c, &type);
  auto redOp = braid::api::redOpFrom(op);
  if (s.ok()) s = redOp.status();
  if (!s.ok()) return report(s.withContext("ncclReduceScatter"));
  return braid::api::runOrDefer(
      c,
      [=] {
        return c->reduceScatter(sendbuff, recvbuff, recvcount, type, redOp.value(), stream)
            .withContext("ncclReduceScatter");
      },
      estimate(c, braid::Collective::kReduceScatter, recvcount, type));
}

BRAID_NCCL_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff, size_t sendcount,
               ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  Comm* c = nullptr;
  braid::DataType type{};
  Status s = checkCall(comm, sendbuff, recvbuff, sendcount, datatype, &c, &type);
  if (!s.ok()) return report(s.withContext("ncclAllGather"));
  return braid::api::runOrDefer(
      c,
      [=] {
        return c->allGather(sendbuff, recvbuff, sendcount, type, stream)
            .withContext("ncclAllGather");
      },
      estimate(c, braid::Collective::kAllGather, sendcount, type));
}

BRAID_NCCL_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  Comm* c = nullptr;
  braid::DataType type{};
  // Only the root reads a send buffer.
  Status s =
      checkRootedCall(comm, root, sendbuff, recvbuff, count, datatype, Uses::kRecvOnly, &c, &type);
  if (!s.ok()) return report(s.withContext("ncclBroadcast"));
  return braid::api::runOrDefer(
      c,
      [=] {
        return c->broadcast(sendbuff, recvbuff, count, type, root, stream)
            .withContext("ncclBroadcast");
      },
      estimate(c, braid::Collective::kBroadcast, count, type));
}

BRAID_NCCL_API(ncclResult_t, ncclBcast, void* buff, size_t count, ncclDataType_t datatype, int root,
               ncclComm_t comm, cudaStream_t stream) {
  // The in-place broadcast, as NCCL defines it.
  return pncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

BRAID_NCCL_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
               cudaStream_t stream) {
  Comm* c = nullptr;
  braid::DataType type{};
  // Only the root writes a receive buffer.
  Status s =
      checkRootedCall(comm, root, sendbuff, recvbuff, count, datatype, Uses::kSendOnly, &c, &type);
  auto redOp = braid::api::redOpFrom(op);
  if (s.ok()) s = redOp.status();
  if (!s.ok()) return report(s.withContext("ncclReduce"));
  return braid::api::runOrDefer(
      c,
      [=] {
        return c->reduce(sendbuff, recvbuff, count, type, redOp.value(), root, stream)
            .withContext("ncclReduce");
      },
      estimate(c, braid::Collective::kReduce, count, type));
}

// Gather, scatter and all-to-all run as batches of sends and receives
// (Comm::gather, ...); in a group they run in issue order with the rest.
BRAID_NCCL_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  Comm* c = nullptr;
  braid::DataType type{};
  Status s = checkCall(comm, sendbuff, recvbuff, count, datatype, &c, &type);
  if (!s.ok()) return report(s.withContext("ncclAlltoAll"));
  return braid::api::runOrDefer(
      c,
      [=] {
        return c->allToAll(sendbuff, recvbuff, count, type, stream).withContext("ncclAlltoAll");
      },
      [=] {
        return c->estimateP2pUs(braid::allToAllBatch(c->size(), sendbuff, recvbuff, count, type));
      });
}

BRAID_NCCL_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  Comm* c = nullptr;
  braid::DataType type{};
  // Only the root receives.
  Status s =
      checkRootedCall(comm, root, sendbuff, recvbuff, count, datatype, Uses::kSendOnly, &c, &type);
  if (!s.ok()) return report(s.withContext("ncclGather"));
  return braid::api::runOrDefer(
      c,
      [=] {
        return c->gather(sendbuff, recvbuff, count, type, root, stream).withContext("ncclGather");
      },
      [=] {
        return c->estimateP2pUs(
            braid::gatherBatch(c->rank(), c->size(), sendbuff, recvbuff, count, type, root));
      });
}

BRAID_NCCL_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  Comm* c = nullptr;
  braid::DataType type{};
  // Only the root sends.
  Status s =
      checkRootedCall(comm, root, sendbuff, recvbuff, count, datatype, Uses::kRecvOnly, &c, &type);
  if (!s.ok()) return report(s.withContext("ncclScatter"));
  return braid::api::runOrDefer(
      c,
      [=] {
        return c->scatter(sendbuff, recvbuff, count, type, root, stream).withContext("ncclScatter");
      },
      [=] {
        return c->estimateP2pUs(
            braid::scatterBatch(c->rank(), c->size(), sendbuff, recvbuff, count, type, root));
      });
}
