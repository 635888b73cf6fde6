// Memory windows and the one-sided operations on them (ncclCommWindowRegister, NCCL 2.30's
// ncclWinGetUserPtr, ncclPutSignal, ncclSignal, ncclWaitSignal).
//
// Windows are braid::Comm's (src/comm/windows.h, docs/symmetric-memory.md): on a GPU
// communicator whose ranks share one host and reach each other's GPUs, a buffer from
// ncclMemAlloc registered by every rank becomes a window every rank maps; elsewhere registering
// succeeds and makes no window (*win = NULL), as NCCL 2.30.7 does on a communicator without
// symmetric support, and a window's user pointer is then NULL. Registration is collective, so
// within a group it runs at ncclGroupEnd, concurrently with the other communicators' (ranks as
// threads of one process register from one thread in a group, as with NCCL).
//
// braid has no host RMA yet (ncclCommQueryProperties: hostRmaSupport false), so the one-sided
// calls (put, signal, wait) fail with ncclInvalidArgument saying so, as NCCL's answer on such a
// communicator: never a silent success.
#include <string>

#include "api/api_util.h"
#include "api/group.h"
#include "base/log.h"

using braid::api::commFrom;
using braid::api::report;

namespace {

constexpr const char* kNoHostRma =
    "host RMA is not supported in this communicator (ncclCommQueryProperties: hostRmaSupport = "
    "false; braid has no one-sided operations yet), as NCCL answers on such a communicator";

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
  braid::Comm* k = c.value();
  return braid::api::runOrDefer(k, [k, buff, size, win, winFlags]() -> braid::Status {
    BRAID_ASSIGN_OR_RETURN(void* made, k->registerWindow(buff, size, winFlags));
    *win = static_cast<ncclWindow_t>(made);
    return braid::Status::success();
  });
}

BRAID_NCCL_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm, ncclWindow_t win) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (win == nullptr) return ncclSuccess;  // a declined registration's window, as NCCL allows
  return report(c.value()->deregisterWindow(win));
}

BRAID_NCCL_API(ncclResult_t, ncclWinGetUserPtr, ncclComm_t comm, ncclWindow_t win,
               void** outUserPtr) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (outUserPtr == nullptr) {
    return report(braid::invalidArgument("ncclWinGetUserPtr: outUserPtr is NULL"));
  }
  *outUserPtr = nullptr;
  auto user = c.value()->windowUserPointer(win);
  if (!user.ok()) return report(user.status());
  *outUserPtr = user.value();
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
