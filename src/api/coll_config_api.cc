// The collectives with per-call options (NCCL 2.31's nccl*Config): the call's ncclCollConfig_t
// read (coll_config_view.h) into its CallTuning, the call run on the path of the plain
// collective (collective_call.h), then its launch-completion event recorded.
//
// braid records the event on the call's stream once the call's kernel is enqueued (in a group:
// once the group's fused kernel is), so a stream waiting on it starts after the collective
// ends: later than a launch-completion event of CUDA 12.3 would let it, never earlier, the
// ordering a waiter relies on. A host communicator launches no kernel and records nothing, as
// NCCL records no event for work that launches none.
#include <string>

#include "api/coll_config_view.h"
#include "api/collective_call.h"
#include "api/group.h"
#include "gpu/runtime.h"

using braid::Collective;
using braid::CollectiveCall;
using braid::Comm;
using braid::api::CallOptions;

namespace {

// The launch event of a call that `comm` has just run (or queued for the group's end).
ncclResult_t recordLaunchEvent(const char* name, ncclComm_t handle, cudaEvent_t event,
                               void* stream) {
  braid::Result<Comm*> comm = braid::api::commFrom(handle);
  if (!comm.ok()) return braid::api::report(comm.status().withContext(name));
  if (event == nullptr || !comm.value()->onGpu()) return ncclSuccess;
  return braid::api::runAfterLaunch(comm.value(), [name, event, stream] {
    return braid::gpu::runtime()
        .eventRecord(event, stream)
        .withContext(std::string(name) + ": recording launchCompletionEvent");
  });
}

// A collective run with its options.
ncclResult_t runConfigured(const char* name, ncclComm_t comm, ncclDataType_t datatype,
                           ncclRedOp_t op, CollectiveCall call, const ncclCollConfig_t* config) {
  braid::Result<CallOptions> options = braid::api::readCollConfig(config);
  if (!options.ok()) return braid::api::report(options.status().withContext(name));
  call.tuning = options.value().tuning;
  const ncclResult_t ran = braid::api::runCollective(name, comm, datatype, op, call);
  if (ran != ncclSuccess) return ran;
  return recordLaunchEvent(name, comm, options.value().launchEvent, call.stream);
}

// Gather, scatter and all-to-all run as batches of sends and receives: NCCL names no algorithm
// for them, so a selection that must be honoured is refused; the channel options do not apply.
template <typename Check>
ncclResult_t runConfiguredBatch(const char* name, ncclComm_t comm, ncclDataType_t datatype,
                                cudaStream_t stream, const ncclCollConfig_t* config, Check check) {
  braid::Result<CallOptions> options = braid::api::readCollConfig(config);
  if (!options.ok()) return braid::api::report(options.status().withContext(name));
  if (options.value().selectsAlgorithm && options.value().tuning.forcePairs) {
    return braid::api::report(braid::invalidArgument(
        std::string(name) +
        ": runs as point-to-point sends and receives, which have no algorithm to select "
        "(algSelection with forceAlgSelection 1)"));
  }
  const ncclResult_t ran = braid::api::runBatch(name, comm, datatype, stream, check);
  if (ran != ncclSuccess) return ran;
  return recordLaunchEvent(name, comm, options.value().launchEvent, stream);
}

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclAllReduceConfig, const void* sendbuff, void* recvbuff,
               size_t count, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
               cudaStream_t stream, const ncclCollConfig_t* config) {
  return runConfigured(
      "ncclAllReduceConfig", comm, datatype, op,
      {Collective::kAllReduce, sendbuff, recvbuff, count, {}, {}, -1, {}, {}, stream}, config);
}

BRAID_NCCL_API(ncclResult_t, ncclReduceScatterConfig, const void* sendbuff, void* recvbuff,
               size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
               cudaStream_t stream, const ncclCollConfig_t* config) {
  return runConfigured(
      "ncclReduceScatterConfig", comm, datatype, op,
      {Collective::kReduceScatter, sendbuff, recvbuff, recvcount, {}, {}, -1, {}, {}, stream},
      config);
}

BRAID_NCCL_API(ncclResult_t, ncclAllGatherConfig, const void* sendbuff, void* recvbuff,
               size_t sendcount, ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream,
               const ncclCollConfig_t* config) {
  return runConfigured(
      "ncclAllGatherConfig", comm, datatype, ncclSum,
      {Collective::kAllGather, sendbuff, recvbuff, sendcount, {}, {}, -1, {}, {}, stream}, config);
}

BRAID_NCCL_API(ncclResult_t, ncclBroadcastConfig, const void* sendbuff, void* recvbuff,
               size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
               cudaStream_t stream, const ncclCollConfig_t* config) {
  return runConfigured(
      "ncclBroadcastConfig", comm, datatype, ncclSum,
      {Collective::kBroadcast, sendbuff, recvbuff, count, {}, {}, root, {}, {}, stream}, config);
}

BRAID_NCCL_API(ncclResult_t, ncclReduceConfig, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
               cudaStream_t stream, const ncclCollConfig_t* config) {
  return runConfigured(
      "ncclReduceConfig", comm, datatype, op,
      {Collective::kReduce, sendbuff, recvbuff, count, {}, {}, root, {}, {}, stream}, config);
}

BRAID_NCCL_API(ncclResult_t, ncclAlltoAllConfig, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream,
               const ncclCollConfig_t* config) {
  return runConfiguredBatch("ncclAlltoAllConfig", comm, datatype, stream, config,
                            [&](Comm* c, braid::DataType type) {
                              return c->checkAllToAll(sendbuff, recvbuff, count, type);
                            });
}

BRAID_NCCL_API(ncclResult_t, ncclGatherConfig, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream,
               const ncclCollConfig_t* config) {
  return runConfiguredBatch("ncclGatherConfig", comm, datatype, stream, config,
                            [&](Comm* c, braid::DataType type) {
                              return c->checkGather(sendbuff, recvbuff, count, type, root);
                            });
}

BRAID_NCCL_API(ncclResult_t, ncclScatterConfig, const void* sendbuff, void* recvbuff, size_t count,
               ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream,
               const ncclCollConfig_t* config) {
  return runConfiguredBatch("ncclScatterConfig", comm, datatype, stream, config,
                            [&](Comm* c, braid::DataType type) {
                              return c->checkScatter(sendbuff, recvbuff, count, type, root);
                            });
}
