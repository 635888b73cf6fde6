// braidGetDeviceApi (braid_ext.h): the process's gpu::Runtime as a C table.
#include <cstring>
#include <string>

#include "api/api_util.h"
#include "braid_ext.h"
#include "gpu/runtime.h"

using braid::api::report;

namespace {

braid::gpu::Runtime& rt() { return braid::gpu::runtime(); }

ncclResult_t check(const void* out, const char* name) {
  if (out != nullptr) return ncclSuccess;
  return report(braid::invalidArgument(std::string(name) + " is NULL"));
}

template <typename T>
ncclResult_t store(braid::Result<T> value, T* out) {
  if (!value.ok()) return report(value.status());
  *out = value.value();
  return ncclSuccess;
}

int deviceCount() { return rt().deviceCount(); }
ncclResult_t setDevice(int device) { return report(rt().setDevice(device)); }
ncclResult_t getDevice(int* device) {
  if (check(device, "device") != ncclSuccess) return ncclInvalidArgument;
  return store(rt().currentDevice(), device);
}
ncclResult_t deviceName(int device, char* name, size_t bytes) {
  if (check(name, "name") != ncclSuccess || bytes == 0) return ncclInvalidArgument;
  auto info = rt().deviceInfo(device);
  if (!info.ok()) return report(info.status());
  snprintf(name, bytes, "%s", info.value().name.c_str());
  return ncclSuccess;
}
ncclResult_t alloc(void** ptr, size_t bytes) {
  if (check(ptr, "ptr") != ncclSuccess) return ncclInvalidArgument;
  return store(rt().deviceAlloc(bytes), ptr);
}
ncclResult_t release(void* ptr) { return report(rt().deviceFree(ptr)); }
ncclResult_t copy(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  return report(rt().copy(dst, src, bytes, stream));
}
ncclResult_t fill(void* dst, int value, size_t bytes, cudaStream_t stream) {
  return report(rt().fill(dst, value, bytes, stream));
}
ncclResult_t streamCreate(cudaStream_t* stream) {
  if (check(stream, "stream") != ncclSuccess) return ncclInvalidArgument;
  auto s = rt().streamCreate();
  if (!s.ok()) return report(s.status());
  *stream = static_cast<cudaStream_t>(s.value());
  return ncclSuccess;
}
ncclResult_t streamDestroy(cudaStream_t stream) { return report(rt().streamDestroy(stream)); }
ncclResult_t streamSynchronize(cudaStream_t stream) {
  return report(rt().streamSynchronize(stream));
}
ncclResult_t eventCreate(void** event) {
  if (check(event, "event") != ncclSuccess) return ncclInvalidArgument;
  return store(rt().eventCreate(), event);
}
ncclResult_t eventDestroy(void* event) { return report(rt().eventDestroy(event)); }
ncclResult_t eventRecord(void* event, cudaStream_t stream) {
  return report(rt().eventRecord(event, stream));
}
ncclResult_t streamWaitEvent(cudaStream_t stream, void* event) {
  return report(rt().streamWaitEvent(stream, event));
}
ncclResult_t eventSynchronize(void* event) { return report(rt().eventSynchronize(event)); }
ncclResult_t hostCallback(cudaStream_t stream, void (*fn)(void*), void* arg) {
  if (fn == nullptr) return report(braid::invalidArgument("fn is NULL"));
  return report(rt().hostCallback(stream, fn, arg));
}

ncclResult_t streamBeginCapture(cudaStream_t stream, int mode) {
  if (mode < 0 || mode > 2) {
    return report(braid::invalidArgument("capture mode " + std::to_string(mode) +
                                         " is none of 0 (global), 1 (thread-local), 2 (relaxed)"));
  }
  return report(rt().beginCapture(stream, static_cast<braid::gpu::CaptureMode>(mode)));
}
ncclResult_t streamEndCapture(cudaStream_t stream, void** graph) {
  if (check(graph, "graph") != ncclSuccess) return ncclInvalidArgument;
  return store(rt().endCapture(stream), graph);
}
ncclResult_t graphLaunch(void* graph, cudaStream_t stream) {
  return report(rt().graphLaunch(graph, stream));
}
ncclResult_t graphDestroy(void* graph) { return report(rt().graphDestroy(graph)); }

}  // namespace

extern "C" __attribute__((visibility("default"))) const braidDeviceApi* braidGetDeviceApi(void) {
  static const braidDeviceApi table = {
      BRAID_DEVICE_API_VERSION,
      rt().emulated() ? 1 : 0,
      deviceCount,
      setDevice,
      getDevice,
      deviceName,
      alloc,
      release,
      copy,
      fill,
      streamCreate,
      streamDestroy,
      streamSynchronize,
      eventCreate,
      eventDestroy,
      eventRecord,
      streamWaitEvent,
      eventSynchronize,
      hostCallback,
      streamBeginCapture,
      streamEndCapture,
      graphLaunch,
      graphDestroy,
  };
  return &table;
}
