// Memory windows and the one-sided operations on them (ncclCommWindowRegister, NCCL 2.30's
// ncclWinGetUserPtr, ncclPutSignal, ncclSignal, ncclWaitSignal).
//
// braid has no symmetric memory yet, so it declines windows exactly as NCCL 2.30 does on a
// communicator without symmetric support: registering succeeds and makes no window (*win =
// NULL), deregistering NULL succeeds, and a window's user pointer is NULL. Programs that test
// for the NULL window (PyTorch does) fall back to their ordinary path. Without symmetric memory
// NCCL's communicator has no host RMA either (ncclCommQueryProperties: hostRmaSupport false),
// and its one-sided calls (put, signal, wait) fail with ncclInvalidArgument saying so; braid's
// answer the same, never a silent success.
#include <string>

#include "api/api_util.h"
#include "base/log.h"

using braid::api::commFrom;
using braid::api::report;

namespace {

constexpr const char* kNoWindows =
    "braid has no symmetric memory yet: ncclCommWindowRegister makes no window (NULL), as NCCL "
    "does on a communicator without symmetric support";
constexpr const char* kNoHostRma =
    "host RMA is not supported in this communicator (ncclCommQueryProperties: hostRmaSupport = "
    "false; braid has no symmetric memory yet), as NCCL answers on such a communicator";

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclCommWindowRegister, ncclComm_t comm, void* buff, size_t size,
               ncclWindow_t* win, int winFlags) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (win == nullptr) return report(braid::invalidArgument("ncclCommWindowRegister: win is NULL"));
  *win = nullptr;
  if (buff == nullptr || size == 0) {
    return report(
        braid::invalidArgument("ncclCommWindowRegister: the buffer is NULL or of size 0"));
  }
  const int known = NCCL_WIN_COLL_SYMMETRIC | NCCL_WIN_STRICT_ORDERING;
  if ((winFlags & ~known) != 0) {
    return report(braid::invalidArgument("ncclCommWindowRegister: unknown flags " +
                                         std::to_string(winFlags)));
  }
  BRAID_INFO("ncclCommWindowRegister: %s", kNoWindows);
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm, ncclWindow_t win) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (win != nullptr) {
    return report(braid::invalidArgument(
        "ncclCommWindowDeregister: braid made no window, so this one is not braid's"));
  }
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclWinGetUserPtr, ncclComm_t comm, ncclWindow_t win,
               void** outUserPtr) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (outUserPtr == nullptr) {
    return report(braid::invalidArgument("ncclWinGetUserPtr: outUserPtr is NULL"));
  }
  (void)win;
  *outUserPtr = nullptr;  // NCCL's answer without symmetric support
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclPutSignal, const void* localbuff, size_t count,
               ncclDataType_t datatype, int peer, ncclWindow_t peerWin, size_t peerWinOffset,
               int sigIdx, int ctx, unsigned int flags, ncclComm_t comm, cudaStream_t stream) {
  (void)localbuff, (void)count, (void)datatype, (void)peer, (void)peerWin, (void)peerWinOffset;
  (void)sigIdx, (void)ctx, (void)flags, (void)stream;
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  return report(braid::invalidArgument(std::string("ncclPutSignal: ") + kNoHostRma));
}

BRAID_NCCL_API(ncclResult_t, ncclSignal, int peer, int sigIdx, int ctx, unsigned int flags,
               ncclComm_t comm, cudaStream_t stream) {
  (void)peer, (void)sigIdx, (void)ctx, (void)flags, (void)stream;
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  return report(braid::invalidArgument(std::string("ncclSignal: ") + kNoHostRma));
}

BRAID_NCCL_API(ncclResult_t, ncclWaitSignal, int nDesc, ncclWaitSignalDesc_t* signalDescs,
               ncclComm_t comm, cudaStream_t stream) {
  (void)nDesc, (void)signalDescs, (void)stream;
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  return report(braid::invalidArgument(std::string("ncclWaitSignal: ") + kNoHostRma));
}
