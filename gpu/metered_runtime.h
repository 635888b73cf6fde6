// MeteredRuntime: the process's runtime as one communicator sees it, counting the device memory
// the communicator holds: every deviceAlloc made through it, less every deviceFree. A GPU
// communicator makes all its device memory through its meter (GpuSide::runtime), so the count
// is what ncclCommMemStats reports, and what ncclCommSuspend gives back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "gpu/forwarding_runtime.h"

namespace braid::gpu {

class MeteredRuntime final : public ForwardingRuntime {
 public:
  explicit MeteredRuntime(Runtime& inner) : ForwardingRuntime(inner) {}

  Result<void*> deviceAlloc(size_t bytes) override {
    Result<void*> made = inner().deviceAlloc(bytes);
    if (made.ok() && made.value() != nullptr) {
      std::lock_guard<std::mutex> lock(mutex_);
      sizes_[made.value()] = bytes;
      deviceBytes_ += bytes;
    }
    return made;
  }

  Status deviceFree(void* pointer) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = sizes_.find(pointer);
      if (it != sizes_.end()) {
        deviceBytes_ -= it->second;
        sizes_.erase(it);
      }
    }
    return inner().deviceFree(pointer);
  }

  /// Bytes of device memory allocated through this runtime and not freed.
  uint64_t deviceBytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return deviceBytes_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<void*, size_t> sizes_;
  uint64_t deviceBytes_ = 0;
};

}  // namespace braid::gpu
