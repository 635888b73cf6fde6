// Memory the NCCL API hands out and registers: ncclMemAlloc / ncclMemFree
// (device memory of the current device, through braid's CUDA seam, so an
// emulated GPU serves them too; on a machine without a GPU, host memory the
// ranks of the host can map) and ncclCommRegister / ncclCommDeregister.
#include "api/api_util.h"
#include "gpu/runtime.h"
#include "transport/shm/shared_host_memory.h"

using braid::api::commFrom;
using braid::api::report;

BRAID_NCCL_API(ncclResult_t, ncclMemAlloc, void** ptr, size_t size) {
  if (ptr == nullptr) return report(braid::invalidArgument("ncclMemAlloc: ptr is NULL"));
  *ptr = nullptr;
  braid::gpu::Runtime& rt = braid::gpu::runtime();
  if (rt.deviceCount() == 0) {
    // Host communicators' memory: shared memory the ranks of this host map, so the zero-copy
    // collectives read and write it in place (src/exec/zero_copy.h).
    auto p = braid::transport::shm::allocSharedHost(size);
    if (!p.ok()) return report(p.status().withContext("ncclMemAlloc of host memory"));
    *ptr = p.value();
    return ncclSuccess;
  }
  auto p = rt.deviceAlloc(size);
  if (!p.ok()) return report(p.status().withContext("ncclMemAlloc"));
  *ptr = p.value();
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclMemFree, void* ptr) {
  if (ptr == nullptr) return ncclSuccess;
  if (braid::transport::shm::freeSharedHost(ptr)) return ncclSuccess;
  return report(braid::gpu::runtime().deviceFree(ptr).withContext("ncclMemFree"));
}

BRAID_NCCL_API(ncclResult_t, ncclCommRegister, const ncclComm_t comm, void* buff, size_t size,
               void** handle) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status().withContext("ncclCommRegister"));
  if (handle == nullptr) return report(braid::invalidArgument("ncclCommRegister: handle is NULL"));
  auto h = c.value()->registerBuffer(buff, size);
  if (!h.ok()) return report(h.status().withContext("ncclCommRegister"));
  *handle = h.value();
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclCommDeregister, const ncclComm_t comm, void* handle) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status().withContext("ncclCommDeregister"));
  return report(c.value()->deregisterBuffer(handle).withContext("ncclCommDeregister"));
}
