// The one path of every collective of the C API: the communicator, datatype and operator
// translated from NCCL's values, then the call run at once outside a group, or checked at once
// and queued for ncclGroupEnd. The collectives (ncclAllReduce ... ncclReduce, braidAllGatherV,
// braidReduceScatterV) are CollectiveCalls; gather, scatter and the all-to-alls checked batches
// of sends and receives (Comm::checkGather, ...).
#pragma once

#include "api/api_util.h"
#include "braid/comm.h"
#include "nccl.h"

namespace braid::api {

/// Runs `call` (its type and op filled from `datatype` and `op`; `op` is read only by the
/// collectives that reduce) on `handle`'s communicator; failures say `name`. Outside a group the
/// call runs at once, without the queue's std::function, so that a tiny call pays for nothing
/// else; in a group its arguments are checked now (Comm::checkCollective), a variable-count
/// call's arrays copied, so the caller may reuse them at once, and it runs at ncclGroupEnd.
ncclResult_t runCollective(const char* name, ncclComm_t handle, ncclDataType_t datatype,
                           ncclRedOp_t op, CollectiveCall call);

/// Runs a checked batch (`batch`, a failure when the check failed) at once outside a group, or
/// queues it for ncclGroupEnd, where it runs alone in issue order; failures say `name`.
ncclResult_t runBatch(const char* name, Comm* comm, Result<CheckedBatch> batch, void* stream);

/// runBatch of the batch `check(comm, type)` makes, with `handle` and `datatype` translated.
template <typename Check>
ncclResult_t runBatch(const char* name, ncclComm_t handle, ncclDataType_t datatype, void* stream,
                      Check check) {
  Result<Comm*> comm = commFrom(handle);
  if (!comm.ok()) return report(comm.status().withContext(name));
  Result<DataType> type = dataTypeFrom(datatype);
  if (!type.ok()) return report(type.status().withContext(name));
  return runBatch(name, comm.value(), check(comm.value(), type.value()), stream);
}

}  // namespace braid::api
