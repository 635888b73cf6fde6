// ncclCommRegister and ncclCommDeregister on braid::Comm: registrations are tracked (Calls
// keeps them) so that a deregistration is checked, but no path reads them yet: the FIFOs copy.
#include <map>

#include "base/log.h"
#include "comm/comm_impl.h"

namespace braid {

Result<void*> Comm::registerBuffer(void* buffer, size_t bytes) {
  std::map<void*, size_t>& registrations = impl_->calls.registrations;
  if (buffer == nullptr) return invalidArgument("buffer is NULL");
  if (bytes == 0) return invalidArgument("size is 0");
  auto [it, fresh] = registrations.emplace(buffer, bytes);
  if (!fresh) return invalidUsage("buffer is registered with this communicator already");
  if (impl_->gpu) {
    BRAID_INFO(
        "register: %zu bytes at %p on device %d: tracked; braid's kernels copy through "
        "their FIFOs, no zero-copy path uses registrations yet",
        bytes, buffer, impl_->gpu->device);
  } else {
    BRAID_INFO(
        "register: %zu bytes at %p on a host communicator: tracked; host FIFOs copy "
        "through shared memory, no zero-copy path uses registrations",
        bytes, buffer);
  }
  return it->first;
}

Status Comm::deregisterBuffer(void* handle) {
  std::map<void*, size_t>& registrations = impl_->calls.registrations;
  if (handle == nullptr) return invalidArgument("handle is NULL");
  if (registrations.erase(handle) == 0) {
    return invalidArgument("handle is not a live registration of this communicator");
  }
  return Status::success();
}

}  // namespace braid
