// ncclCommRegister and ncclCommDeregister on braid::Comm: registrations are tracked
// (registrations.h) so that a deregistration is checked, but no path reads them yet: the FIFOs
// copy. And the symmetric memory windows (ncclCommWindowRegister), which the Windows part
// makes (windows.h).

#include "base/log.h"
#include "comm/comm_impl.h"

namespace braid {

Result<void*> Comm::registerBuffer(void* buffer, size_t bytes) {
  BRAID_ASSIGN_OR_RETURN(void* handle, impl_->registrations.add(buffer, bytes));
  if (impl_->gpu) {
    BRAID_INFO(
        "register: %zu bytes at %p on device %d: tracked; braid's kernels copy through "
        "their FIFOs, no zero-copy path uses registrations yet",
        bytes, buffer, impl_->gpu->device());
  } else {
    BRAID_INFO(
        "register: %zu bytes at %p on a host communicator: tracked; host FIFOs copy "
        "through shared memory, no zero-copy path uses registrations",
        bytes, buffer);
  }
  return handle;
}

Status Comm::deregisterBuffer(void* handle) { return impl_->registrations.remove(handle); }

// Symmetric memory windows (comm/windows.h). A host communicator makes none, as NCCL's without
// symmetric support: registering succeeds with no window.
Result<void*> Comm::registerWindow(void* buffer, size_t bytes, int flags) {
  if (!impl_->windows) {
    BRAID_INFO(
        "windows: ncclCommWindowRegister makes no window (NULL) on a host communicator, as "
        "NCCL's without symmetric support");
    return static_cast<void*>(nullptr);
  }
  auto keep = impl_->keepCallersDevice();
  BRAID_ASSIGN_OR_RETURN(ncclWindow_vidmem * window, impl_->windows->add(buffer, bytes, flags));
  return static_cast<void*>(window);
}

Status Comm::deregisterWindow(void* window) {
  if (!impl_->windows) {
    return invalidArgument(
        "ncclCommWindowDeregister: a host communicator makes no windows, so this one is not its");
  }
  auto keep = impl_->keepCallersDevice();
  return impl_->windows->remove(window);
}

Result<void*> Comm::windowUserPointer(void* window) const {
  if (declinesWindows()) return static_cast<void*>(nullptr);
  if (window == nullptr) return invalidArgument("ncclWinGetUserPtr: win is NULL");
  return impl_->windows->userPointer(window);
}

bool Comm::declinesWindows() const { return !impl_->windows || impl_->windows->declines(); }

Result<WindowInfo> Comm::lookupWindow(const void* window) { return comm::lookupWindow(window); }

}  // namespace braid
