// The device layers of braid-perf (device.h).
#include "perf/device.h"

#include <dlfcn.h>

#include <cstdio>
#include <memory>

#include "braid_ext.h"

#if defined(BRAID_PERF_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace braid::perf {
namespace {

/// No GPU: communicators run on host memory.
class NoDevice final : public Device {
 public:
  const char* kind() const override { return "none"; }
  int count() const override { return 0; }
  bool setDevice(int) const override { return false; }
  std::string name(int) const override { return "host memory"; }
  void* alloc(size_t) const override { return nullptr; }
  void release(void*) const override {}
  bool copy(void*, const void*, size_t, cudaStream_t) const override { return false; }
  cudaStream_t newStream() const override { return nullptr; }
  void destroyStream(cudaStream_t) const override {}
  bool sync(cudaStream_t) const override { return true; }
};

/// braid's seam (braid_ext.h): its CUDA runtime, or its emulated GPU.
class BraidDevice final : public Device {
 public:
  explicit BraidDevice(const braidDeviceApi* api) : api_(api) {}
  const char* kind() const override {
    return api_->emulated ? "emulated GPU (braid's, BRAID_EMULATE_GPUS)" : "CUDA (braid's runtime)";
  }
  int count() const override { return api_->deviceCount(); }
  bool setDevice(int d) const override { return ok(api_->setDevice(d), "setDevice"); }
  std::string name(int d) const override {
    char text[256] = "?";
    api_->deviceName(d, text, sizeof text);
    return text;
  }
  void* alloc(size_t bytes) const override {
    void* p = nullptr;
    return ok(api_->alloc(&p, bytes), "alloc") ? p : nullptr;
  }
  void release(void* p) const override { api_->release(p); }
  bool copy(void* dst, const void* src, size_t bytes, cudaStream_t s) const override {
    return ok(api_->copy(dst, src, bytes, s), "copy") && sync(s);
  }
  cudaStream_t newStream() const override {
    cudaStream_t s = nullptr;
    return ok(api_->streamCreate(&s), "streamCreate") ? s : nullptr;
  }
  void destroyStream(cudaStream_t s) const override { api_->streamDestroy(s); }
  bool sync(cudaStream_t s) const override {
    return ok(api_->streamSynchronize(s), "streamSynchronize");
  }

 private:
  static bool ok(ncclResult_t r, const char* what) {
    if (r == ncclSuccess) return true;
    fprintf(stderr, "braid-perf: device %s failed: %s\n", what, ncclGetLastError(nullptr));
    return false;
  }
  const braidDeviceApi* api_;
};

#if defined(BRAID_PERF_CUDA)
/// The CUDA runtime of braid-perf itself, for a libnccl.so.2 that is not braid's.
class CudaDevice final : public Device {
 public:
  const char* kind() const override { return "CUDA (braid-perf's runtime)"; }
  int count() const override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
    return n;
  }
  bool setDevice(int d) const override { return ok(cudaSetDevice(d), "cudaSetDevice"); }
  std::string name(int d) const override {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) return "?";
    return p.name;
  }
  void* alloc(size_t bytes) const override {
    void* p = nullptr;
    return ok(cudaMalloc(&p, bytes), "cudaMalloc") ? p : nullptr;
  }
  void release(void* p) const override { cudaFree(p); }
  bool copy(void* dst, const void* src, size_t bytes, cudaStream_t s) const override {
    return ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s), "cudaMemcpyAsync") && sync(s);
  }
  cudaStream_t newStream() const override {
    cudaStream_t s = nullptr;
    return ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate") ? s
                                                                                        : nullptr;
  }
  void destroyStream(cudaStream_t s) const override { cudaStreamDestroy(s); }
  bool sync(cudaStream_t s) const override {
    return ok(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  }

 private:
  static bool ok(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    fprintf(stderr, "braid-perf: %s failed: %s\n", what, cudaGetErrorString(e));
    return false;
  }
};
#endif

std::unique_ptr<Device> choose() {
  using GetApi = const braidDeviceApi* (*)();
  auto getApi = reinterpret_cast<GetApi>(dlsym(RTLD_DEFAULT, "braidGetDeviceApi"));
  if (getApi != nullptr) {
    const braidDeviceApi* api = getApi();
    if (api != nullptr && api->version >= BRAID_DEVICE_API_VERSION && api->deviceCount() > 0) {
      return std::make_unique<BraidDevice>(api);
    }
    return std::make_unique<NoDevice>();
  }
#if defined(BRAID_PERF_CUDA)
  auto cuda = std::make_unique<CudaDevice>();
  if (cuda->count() > 0) return cuda;
#endif
  return std::make_unique<NoDevice>();
}

}  // namespace

const Device& Device::get() {
  static const std::unique_ptr<Device> device = choose();
  return *device;
}

}  // namespace braid::perf
