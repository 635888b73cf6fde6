// The emulated GPU, recording the blocks and calls of every launch, and counting the pointer
// queries: what tests of how a GPU communicator's calls become launches look at
// (gpu_launch_test, gpu_residency_test).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gpu/forwarding_runtime.h"
#include "gpu/runtime.h"
#include "kernels/engine/launch.h"

namespace braid::testing {

/// The emulated GPU, recording the calls and blocks of each launch.
class RecordingRuntime final : public gpu::ForwardingRuntime {
 public:
  explicit RecordingRuntime(int devices) : RecordingRuntime(gpu::makeEmulatedRuntime(devices)) {}
  explicit RecordingRuntime(const gpu::EmulatedShape& shape)
      : RecordingRuntime(gpu::makeEmulatedRuntime(shape)) {}
  explicit RecordingRuntime(std::unique_ptr<gpu::Runtime> emulated)
      : ForwardingRuntime(*emulated), owned_(std::move(emulated)) {}

  struct Record {
    int device;
    unsigned blocks;
    uint32_t ncalls;
  };
  std::vector<Record> launches() {
    std::lock_guard<std::mutex> lock(mutex_);
    return launches_;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    launches_.clear();
    pointerQueries_ = 0;
  }
  /// The pointer-attribute queries (cudaPointerGetAttributes) since the last clear.
  int pointerQueries() {
    std::lock_guard<std::mutex> lock(mutex_);
    return pointerQueries_;
  }

  Result<gpu::PointerInfo> pointerInfo(const void* p) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++pointerQueries_;
    }
    return inner().pointerInfo(p);
  }

  Status launch(const gpu::Launch& l, gpu::Stream s) override {
    const auto* args = static_cast<const kernels::engine::EngineArgs*>(l.args);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      launches_.push_back({inner().currentDevice().value(), l.blocks, args->ncalls});
    }
    return inner().launch(l, s);
  }

 private:
  std::unique_ptr<gpu::Runtime> owned_;  ///< the emulated GPU behind it
  std::mutex mutex_;
  std::vector<Record> launches_;
  int pointerQueries_ = 0;
};

}  // namespace braid::testing
