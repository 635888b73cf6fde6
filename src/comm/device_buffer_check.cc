// DeviceBufferCheck (device_buffer_check.h).
#include "comm/device_buffer_check.h"

#include <algorithm>
#include <string>

namespace braid::comm {

Status DeviceBufferCheck::check(gpu::Runtime& runtime, const void* buffer, const char* name) {
  if (buffer == nullptr) return Status::success();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (std::find(fine_.begin(), fine_.end(), buffer) != fine_.end()) return Status::success();
  }
  BRAID_ASSIGN_OR_RETURN(const gpu::PointerInfo info, runtime.pointerInfo(buffer));
  if (info.kind == gpu::MemoryKind::kHost) {
    return invalidArgument(std::string(name) +
                           " is host memory, but this communicator runs on a GPU: pass device "
                           "memory (cudaMalloc, ncclMemAlloc), or make the communicator with "
                           "BRAID_HOST_COMM=1 for host buffers");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  fine_[next_] = buffer;
  next_ = (next_ + 1) % kRemembered;
  return Status::success();
}

}  // namespace braid::comm
