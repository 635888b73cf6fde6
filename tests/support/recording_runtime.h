// The emulated GPU, recording the blocks and calls of every launch: what tests of how a GPU
// communicator's calls become launches look at (gpu_launch_test, gpu_residency_test).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/runtime.h"
#include "kernels/engine/launch.h"

namespace braid::testing {

/// The emulated GPU, recording the calls and blocks of each launch.
class RecordingRuntime final : public gpu::Runtime {
 public:
  explicit RecordingRuntime(int devices) : inner_(gpu::makeEmulatedRuntime(devices)) {}
  explicit RecordingRuntime(const gpu::EmulatedShape& shape)
      : inner_(gpu::makeEmulatedRuntime(shape)) {}

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
  }

  Status launch(const gpu::Launch& l, gpu::Stream s) override {
    const auto* args = static_cast<const kernels::engine::EngineArgs*>(l.args);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      launches_.push_back({inner_->currentDevice().value(), l.blocks, args->ncalls});
    }
    return inner_->launch(l, s);
  }

  // Everything else is the emulated GPU's.
  std::string describe() const override { return inner_->describe(); }
  bool emulated() const override { return true; }
  int deviceCount() override { return inner_->deviceCount(); }
  Result<int> currentDevice() override { return inner_->currentDevice(); }
  Status setDevice(int d) override { return inner_->setDevice(d); }
  Result<gpu::DeviceInfo> deviceInfo(int d) override { return inner_->deviceInfo(d); }
  Result<bool> canAccessPeer(int d, int p) override { return inner_->canAccessPeer(d, p); }
  Status enablePeerAccess(int p) override { return inner_->enablePeerAccess(p); }
  Result<void*> deviceAlloc(size_t b) override { return inner_->deviceAlloc(b); }
  Status deviceFree(void* p) override { return inner_->deviceFree(p); }
  Result<void*> hostAlloc(size_t b) override { return inner_->hostAlloc(b); }
  Status hostFree(void* p) override { return inner_->hostFree(p); }
  Status hostRegister(void* p, size_t b) override { return inner_->hostRegister(p, b); }
  Status hostUnregister(void* p) override { return inner_->hostUnregister(p); }
  Result<gpu::PointerInfo> pointerInfo(const void* p) override { return inner_->pointerInfo(p); }
  Status copy(void* d, const void* s, size_t b, gpu::Stream st) override {
    return inner_->copy(d, s, b, st);
  }
  Status fill(void* d, int v, size_t b, gpu::Stream st) override {
    return inner_->fill(d, v, b, st);
  }
  Result<gpu::IpcHandle> ipcHandle(void* p) override { return inner_->ipcHandle(p); }
  Result<void*> ipcOpen(const gpu::IpcHandle& h) override { return inner_->ipcOpen(h); }
  Status ipcClose(void* p) override { return inner_->ipcClose(p); }
  Result<gpu::Stream> streamCreate() override { return inner_->streamCreate(); }
  Status streamDestroy(gpu::Stream s) override { return inner_->streamDestroy(s); }
  Status streamSynchronize(gpu::Stream s) override { return inner_->streamSynchronize(s); }
  Result<bool> streamCapturing(gpu::Stream s) override { return inner_->streamCapturing(s); }
  Result<gpu::Event> eventCreate() override { return inner_->eventCreate(); }
  Status eventDestroy(gpu::Event e) override { return inner_->eventDestroy(e); }
  Status eventRecord(gpu::Event e, gpu::Stream s) override { return inner_->eventRecord(e, s); }
  Status streamWaitEvent(gpu::Stream s, gpu::Event e) override {
    return inner_->streamWaitEvent(s, e);
  }
  Status eventSynchronize(gpu::Event e) override { return inner_->eventSynchronize(e); }
  Result<bool> eventDone(gpu::Event e) override { return inner_->eventDone(e); }
  Status hostCallback(gpu::Stream s, void (*fn)(void*), void* a) override {
    return inner_->hostCallback(s, fn, a);
  }
  Result<int> residentBlocksPerSm(const gpu::Launch& k) override {
    return inner_->residentBlocksPerSm(k);
  }
  Status deviceSynchronize() override { return inner_->deviceSynchronize(); }
  Status beginCapture(gpu::Stream s, gpu::CaptureMode m) override {
    return inner_->beginCapture(s, m);
  }
  Result<gpu::Graph> endCapture(gpu::Stream s) override { return inner_->endCapture(s); }
  Status graphLaunch(gpu::Graph g, gpu::Stream s) override { return inner_->graphLaunch(g, s); }
  Status graphDestroy(gpu::Graph g) override { return inner_->graphDestroy(g); }
  gpu::CaptureMode exchangeCaptureMode(gpu::CaptureMode m) override {
    return inner_->exchangeCaptureMode(m);
  }

 private:
  std::unique_ptr<gpu::Runtime> inner_;
  std::mutex mutex_;
  std::vector<Record> launches_;
};

}  // namespace braid::testing
