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

#include "braid/status.h"
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

 private:
  enum class Origin { kDeviceAlloc, kIpcMapping, kHostAlloc, kHostRegister };
  struct Range {
    size_t bytes = 0;
    Origin origin = Origin::kDeviceAlloc;
    int device = -1;
    std::unique_ptr<transport::shm::ShmSegment> segment;  ///< device memory and IPC mappings
    std::unique_ptr<unsigned char[], void (*)(unsigned char*)> host{nullptr, nullptr};
  };
  /// The range that starts at `pointer` and came from `origin`; null if none.
  Range* exact(const void* pointer, Origin origin);
  Status release(void* pointer, Origin origin, const char* what);

  std::mutex mutex_;
  std::map<uintptr_t, Range> ranges_;  ///< by start address
};

}  // namespace braid::gpu
