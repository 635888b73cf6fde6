// ForwardingRuntime: a Runtime that passes every call to another, for the runtimes that change a
// few of its answers and keep the rest: the meter of a communicator's device memory
// (gpu/metered_runtime.h), the tests' recording runtime (tests/support/recording_runtime.h).
#pragma once

#include <string>

#include "gpu/runtime.h"

namespace braid::gpu {

class ForwardingRuntime : public Runtime {
 public:
  explicit ForwardingRuntime(Runtime& inner) : inner_(inner) {}

  Status usable() override { return inner_.usable(); }
  Status launch(const Launch& l, Stream s) override { return inner_.launch(l, s); }
  std::string describe() const override { return inner_.describe(); }
  bool emulated() const override { return inner_.emulated(); }
  int deviceCount() override { return inner_.deviceCount(); }
  Result<int> currentDevice() override { return inner_.currentDevice(); }
  Status setDevice(int d) override { return inner_.setDevice(d); }
  Result<DeviceInfo> deviceInfo(int d) override { return inner_.deviceInfo(d); }
  Result<bool> canAccessPeer(int d, int p) override { return inner_.canAccessPeer(d, p); }
  Status enablePeerAccess(int p) override { return inner_.enablePeerAccess(p); }
  Result<void*> deviceAlloc(size_t b) override { return inner_.deviceAlloc(b); }
  Status deviceFree(void* p) override { return inner_.deviceFree(p); }
  Result<void*> hostAlloc(size_t b) override { return inner_.hostAlloc(b); }
  Status hostFree(void* p) override { return inner_.hostFree(p); }
  Status hostRegister(void* p, size_t b) override { return inner_.hostRegister(p, b); }
  Status hostUnregister(void* p) override { return inner_.hostUnregister(p); }
  Result<PointerInfo> pointerInfo(const void* p) override { return inner_.pointerInfo(p); }
  Status copy(void* d, const void* s, size_t b, Stream st) override {
    return inner_.copy(d, s, b, st);
  }
  Status fill(void* d, int v, size_t b, Stream st) override { return inner_.fill(d, v, b, st); }
  Result<IpcHandle> ipcHandle(void* p) override { return inner_.ipcHandle(p); }
  bool vmmSupported(int d) override { return inner_.vmmSupported(d); }
  Result<void*> vmmAlloc(size_t b) override { return inner_.vmmAlloc(b); }
  Status vmmFree(void* p) override { return inner_.vmmFree(p); }
  Result<VmmRange> vmmRange(const void* p, size_t b) override { return inner_.vmmRange(p, b); }
  Result<int> vmmExport(void* p) override { return inner_.vmmExport(p); }
  Result<void*> vmmImport(int fd, size_t b) override { return inner_.vmmImport(fd, b); }
  Status vmmUnmap(void* p) override { return inner_.vmmUnmap(p); }
  bool dmabufSupported(int d) override { return inner_.dmabufSupported(d); }
  Result<int> exportDmabuf(void* p, size_t b) override { return inner_.exportDmabuf(p, b); }
  Result<void*> ipcOpen(const IpcHandle& h) override { return inner_.ipcOpen(h); }
  Status ipcClose(void* p) override { return inner_.ipcClose(p); }
  Result<Stream> streamCreate() override { return inner_.streamCreate(); }
  Status streamDestroy(Stream s) override { return inner_.streamDestroy(s); }
  Status streamSynchronize(Stream s) override { return inner_.streamSynchronize(s); }
  Result<bool> streamCapturing(Stream s) override { return inner_.streamCapturing(s); }
  Result<Event> eventCreate() override { return inner_.eventCreate(); }
  Status eventDestroy(Event e) override { return inner_.eventDestroy(e); }
  Status eventRecord(Event e, Stream s) override { return inner_.eventRecord(e, s); }
  Status streamWaitEvent(Stream s, Event e) override { return inner_.streamWaitEvent(s, e); }
  Status eventRecordExternal(Event e, Stream s) override {
    return inner_.eventRecordExternal(e, s);
  }
  Status streamWaitEventExternal(Stream s, Event e) override {
    return inner_.streamWaitEventExternal(s, e);
  }
  Status eventSynchronize(Event e) override { return inner_.eventSynchronize(e); }
  Result<bool> eventDone(Event e) override { return inner_.eventDone(e); }
  Status hostCallback(Stream s, void (*fn)(void*), void* a) override {
    return inner_.hostCallback(s, fn, a);
  }
  Result<int> residentBlocksPerSm(const Launch& k) override {
    return inner_.residentBlocksPerSm(k);
  }
  Status deviceSynchronize() override { return inner_.deviceSynchronize(); }
  Status beginCapture(Stream s, CaptureMode m) override { return inner_.beginCapture(s, m); }
  Result<Graph> endCapture(Stream s) override { return inner_.endCapture(s); }
  Status graphLaunch(Graph g, Stream s) override { return inner_.graphLaunch(g, s); }
  Status graphDestroy(Graph g) override { return inner_.graphDestroy(g); }
  CaptureMode exchangeCaptureMode(CaptureMode m) override { return inner_.exchangeCaptureMode(m); }

 protected:
  Runtime& inner() { return inner_; }

 private:
  Runtime& inner_;
};

}  // namespace braid::gpu
