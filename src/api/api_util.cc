#include "api/api_util.h"

#include <string>

#include "base/log.h"

namespace braid::api {
namespace {

thread_local std::string tlsLastError;

}  // namespace

const std::string& lastError() { return tlsLastError; }

void remember(const Status& status) {
  if (!status.ok()) tlsLastError = status.message();
}

ncclResult_t report(const Status& status) {
  if (status.ok()) return ncclSuccess;
  tlsLastError = status.message();
  BRAID_WARN("%s", status.message().c_str());
  return static_cast<ncclResult_t>(status.code());
}

Result<Comm*> commFrom(const ncclComm_t comm, bool evenSuspended) {
  if (comm == nullptr) return invalidArgument("comm is NULL");
  if (comm->magic != ncclComm::kMagic) {
    return invalidArgument("comm is not a live communicator (destroyed, or not made by braid)");
  }
  // A call on a communicator still being made (blocking = 0) fails at once, as NCCL's do: the
  // caller may be the one thread that must still create another rank, so waiting could hang it.
  // ncclCommGetAsyncError, ncclCommAbort and ncclCommDestroy do not come here.
  if (!comm->initDone.load(std::memory_order_acquire)) {
    return invalidArgument(
        "the communicator is still being created (config.blocking = 0): poll "
        "ncclCommGetAsyncError until it is no longer ncclInProgress before using it");
  }
  if (!comm->comm) {
    if (!comm->initResult.ok()) return comm->initResult.withContext("the communicator's creation");
    return invalidArgument("comm is not a live communicator (destroyed, or not made by braid)");
  }
  if (!evenSuspended && comm->suspended.load(std::memory_order_acquire)) {
    return invalidUsage("the communicator is suspended (ncclCommSuspend): ncclCommResume it first");
  }
  return comm->comm.get();
}

Result<DataType> dataTypeFrom(ncclDataType_t type) {
  int t = static_cast<int>(type);
  if (t < 0 || t >= kNumDataTypes) return invalidArgument("unknown datatype " + std::to_string(t));
  return static_cast<DataType>(t);
}

RedOp userOpFrom(int ncclValue) {
  return static_cast<RedOp>(kFirstUserOp + (ncclValue - kNumRedOps));
}

int ncclValueOfUserOp(RedOp op) { return static_cast<int>(op) - kFirstUserOp + kNumRedOps; }

Result<RedOp> redOpFrom(ncclRedOp_t op) {
  int o = static_cast<int>(op);
  // Handles past this are not ones any communicator could have made.
  constexpr int kMaxUserOps = 1 << 20;
  if (o < 0 || o >= kNumRedOps + kMaxUserOps) {
    return invalidArgument("unknown reduction op " + std::to_string(o));
  }
  if (o < kNumRedOps) return static_cast<RedOp>(o);
  // ncclRedOpCreatePreMulSum's handles start at ncclNumOps; the communicator
  // checks that the op is one of its live ones when the call runs.
  return userOpFrom(o);
}

ncclResult_t notImplemented(const char* function, const char* plan) {
  return report(invalidUsage(std::string(function) + " is not implemented yet in braid" +
                             (plan && *plan ? std::string(" (") + plan + ")" : std::string())));
}

}  // namespace braid::api
