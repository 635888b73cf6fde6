// The emulated GPU's memory (emulation/gpu/emulated_runtime.cc): device memory is
// host memory, in a POSIX shm segment per allocation so that another
// process can map it from an IPC handle, as CUDA IPC maps a peer's
// allocation. The registry says what every pointer is (pointerInfo).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "braid/status.h"
#include "emulation/gpu/emulated_vmm.h"
#include "gpu/runtime.h"
#include "transport/shm/shm_segment.h"

namespace braid::gpu {

class EmulatedMemory {
 public:
  Result<void*> deviceAlloc(size_t bytes, int device);
  Status deviceFree(void* pointer);
  Result<void*> hostAlloc(size_t bytes);
  Status hostFree(void* pointer);
  Status hostRegister(void* pointer, size_t bytes);
  Status hostUnregister(void* pointer);
  PointerInfo pointerInfo(const void* pointer);
  Result<IpcHandle> ipcHandle(void* pointer);
  Result<void*> ipcOpen(const IpcHandle& handle);
  Status ipcClose(void* pointer);
  /// A dmabuf descriptor for [pointer, pointer + bytes) of a device allocation
  /// (emulated_dmabuf.h), refused as CUDA refuses it: an address or size that is not a multiple
  /// of the host page, or a range that leaves the allocation.
  Result<int> exportDmabuf(void* pointer, size_t bytes);

  // Shareable memory (emulated_vmm.h; emulated_memory_vmm.cc). `physicalDevice` is the machine's
  // device behind `device`, the process's number for it.
  Result<void*> vmmAlloc(size_t bytes, int device, int physicalDevice);
  Status vmmFree(void* base);
  Result<VmmRange> vmmRange(const void* pointer, size_t bytes);
  Result<int> vmmExport(void* base);
  /// `visible` maps this process's device numbers to the machine's (the mapping's device is
  /// the memory's, as this process numbers it; -1 where it does not see it).
  Result<void*> vmmImport(int fd, size_t bytes, const std::vector<int>& visible);
  Status vmmUnmap(void* mapped);

 private:
  enum class Origin { kDeviceAlloc, kIpcMapping, kHostAlloc, kHostRegister, kVmmAlloc, kVmmImport };
  struct Range {
    size_t bytes = 0;
    Origin origin = Origin::kDeviceAlloc;
    int device = -1;
    std::unique_ptr<transport::shm::ShmSegment> segment;  ///< device memory and IPC mappings
    std::unique_ptr<unsigned char[], void (*)(unsigned char*)> host{nullptr, nullptr};
    std::unique_ptr<VmmMapping> vmm;  ///< shareable memory and its imports
  };
  /// The range that starts at `pointer` and came from `origin`; null if none.
  Range* exact(const void* pointer, Origin origin);
  Status release(void* pointer, Origin origin, const char* what);
  /// Keeps `mapping` as a range of `origin` on `device`: its address.
  void* keepMapping(VmmMapping mapping, Origin origin, int device);

  std::mutex mutex_;
  std::map<uintptr_t, Range> ranges_;  ///< by start address
};

}  // namespace braid::gpu
