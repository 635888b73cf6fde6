// The emulated GPU, recording the blocks, calls and parameter bytes of every launch, and
// counting what a call asks the runtime besides (pointer queries, device switches, capture-mode
// exchanges, capture queries): what tests of how a GPU communicator's calls become launches look
// at (gpu_launch_test, gpu_residency_test).
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
    size_t argBytes;  ///< the parameter bytes the launch passed
    /// Each call's kernels::engine::CallKind.
    std::vector<uint8_t> kinds;
  };
  /// What the calls since the last clear asked of the runtime besides launching.
  struct Asked {
    int pointerQueries = 0;  ///< cudaPointerGetAttributes
    int setDevices = 0;      ///< cudaSetDevice
    int modeExchanges = 0;   ///< cudaThreadExchangeStreamCaptureMode
    int captureQueries = 0;  ///< cudaStreamIsCapturing
  };
  std::vector<Record> launches() {
    std::lock_guard<std::mutex> lock(mutex_);
    return launches_;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    launches_.clear();
    asked_ = {};
  }
  Asked asked() {
    std::lock_guard<std::mutex> lock(mutex_);
    return asked_;
  }
  /// The pointer-attribute queries (cudaPointerGetAttributes) since the last clear.
  int pointerQueries() { return asked().pointerQueries; }

  Result<gpu::PointerInfo> pointerInfo(const void* p) override {
    count(&Asked::pointerQueries);
    return inner().pointerInfo(p);
  }
  Status setDevice(int device) override {
    count(&Asked::setDevices);
    return inner().setDevice(device);
  }
  gpu::CaptureMode exchangeCaptureMode(gpu::CaptureMode mode) override {
    count(&Asked::modeExchanges);
    return inner().exchangeCaptureMode(mode);
  }
  Result<bool> streamCapturing(gpu::Stream s) override {
    count(&Asked::captureQueries);
    return inner().streamCapturing(s);
  }

  Status launch(const gpu::Launch& l, gpu::Stream s) override {
    const auto* args = static_cast<const kernels::engine::EngineArgs*>(l.args);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<uint8_t> kinds;
      for (uint32_t i = 0; i < args->ncalls; ++i) kinds.push_back(args->calls[i].kind);
      launches_.push_back(
          {inner().currentDevice().value(), l.blocks, args->ncalls, l.argBytes, kinds});
    }
    return inner().launch(l, s);
  }

 private:
  std::unique_ptr<gpu::Runtime> owned_;  ///< the emulated GPU behind it
  std::mutex mutex_;
  std::vector<Record> launches_;
  Asked asked_;

  void count(int Asked::*what) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++(asked_.*what);
  }
};

}  // namespace braid::testing
