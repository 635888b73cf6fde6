// Memory the NCCL API hands out and registers: ncclMemAlloc / ncclMemFree and
// ncclCommRegister / ncclCommDeregister.
//
// ncclMemAlloc's memory is, as NCCL's: on a device that has CUDA's virtual-memory API with
// shareable handles, memory made by it (gpu::Runtime::vmmAlloc: cuMemCreate with a POSIX file
// descriptor handle, reserved, mapped, readable and writable by the device and its peers),
// rounded up to the allocation granularity, which the host's other processes can map: what
// symmetric memory windows need (docs/symmetric-memory.md); on a device without it, cudaMalloc's
// (said at INFO). Through braid's CUDA seam, so the emulated GPU serves both. On a machine
// without a GPU it is host memory the ranks of the host can map.
#include "api/api_util.h"
#include "base/log.h"
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
  auto device = rt.currentDevice();
  if (!device.ok()) return report(device.status().withContext("ncclMemAlloc"));
  if (size > 0 && rt.vmmSupported(device.value())) {
    auto p = rt.vmmAlloc(size);
    if (!p.ok()) return report(p.status().withContext("ncclMemAlloc of shareable memory"));
    *ptr = p.value();
    return ncclSuccess;
  }
  if (size > 0) {
    BRAID_INFO(
        "ncclMemAlloc: device %d has no shareable virtual memory (cuMemCreate with POSIX "
        "file descriptors): cudaMalloc's memory, which makes no symmetric window",
        device.value());
  }
  auto p = rt.deviceAlloc(size);
  if (!p.ok()) return report(p.status().withContext("ncclMemAlloc"));
  *ptr = p.value();
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclMemFree, void* ptr) {
  if (ptr == nullptr) return ncclSuccess;
  if (braid::transport::shm::freeSharedHost(ptr)) return ncclSuccess;
  braid::gpu::Runtime& rt = braid::gpu::runtime();
  // Shareable memory is freed by its start, as ncclMemAlloc gave it; anything else was
  // cudaMalloc's.
  auto range = rt.vmmRange(ptr, 1);
  if (range.ok() && range.value().base == ptr) {
    return report(rt.vmmFree(ptr).withContext("ncclMemFree"));
  }
  return report(rt.deviceFree(ptr).withContext("ncclMemFree"));
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
