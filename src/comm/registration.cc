// ncclCommRegister and ncclCommDeregister on braid::Comm: registrations are tracked
// (registrations.h) so that a deregistration is checked, but no path reads them yet: the FIFOs
// copy.

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

}  // namespace braid
