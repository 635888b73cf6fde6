// The CUDA runtime behind gpu/runtime.h: each method is one cudart call (a
// few are two), its error turned into a Status that names the call. Built
// only with CUDA (BRAID_HAVE_CUDA); cudart is linked statically, as NCCL
// links it, so libnccl.so.2 loads on machines without the toolkit.
#if defined(BRAID_HAVE_CUDA)

#include <cuda.h>  // the driver's types and launch constants; its functions are found at run time
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "gpu/cuda_driver.h"
#include "gpu/runtime.h"

namespace braid::gpu {

void* driverEntryPoint(const char* symbol, unsigned sinceCuda) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult result = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, sinceCuda, cudaEnableDefault, &result) !=
          cudaSuccess ||
      result != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return fn;
}

namespace {

Status cudaStatus(cudaError_t err, const char* call) {
  if (err == cudaSuccess) return Status::success();
  cudaGetLastError();  // clear the sticky copy of a non-sticky error
  return Status(ErrorCode::kCudaError, std::string(call) + " failed: " + cudaGetErrorString(err) +
                                           " (" + cudaGetErrorName(err) + ")");
}

#define BRAID_CUDA_CALL(call) cudaStatus((call), #call)

/// cuLaunchKernel, found through the runtime (libnccl.so.2 links no libcuda): it takes a
/// parameter buffer of the size a launch gives (Launch::argBytes), where cudaLaunchKernel copies
/// the parameter's declared size. Null where the driver does not offer it.
using LaunchKernelFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, CUstream, void**, void**);
LaunchKernelFn driverLaunchKernel() {
  constexpr unsigned kSinceCuda = 4000;  // the version whose cuLaunchKernel this signature is
  static const auto found =
      reinterpret_cast<LaunchKernelFn>(driverEntryPoint("cuLaunchKernel", kSinceCuda));
  return found;
}

/// cuMemGetHandleForAddressRange (CUDA 11.7): a dmabuf of device memory, for GPUDirect RDMA.
using MemGetHandleFn = CUresult (*)(void*, CUdeviceptr, size_t, CUmemRangeHandleType,
                                    unsigned long long);
MemGetHandleFn driverMemGetHandle() {
  static const auto found =
      reinterpret_cast<MemGetHandleFn>(driverEntryPoint("cuMemGetHandleForAddressRange", 11070));
  return found;
}
/// cuDeviceGetAttribute, for CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, which cudart does not ask.
using DeviceAttributeFn = CUresult (*)(int*, CUdevice_attribute, CUdevice);
DeviceAttributeFn driverDeviceAttribute() {
  static const auto found =
      reinterpret_cast<DeviceAttributeFn>(driverEntryPoint("cuDeviceGetAttribute", 2000));
  return found;
}

cudaStream_t cuStream(Stream s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t cuEvent(Event e) { return static_cast<cudaEvent_t>(e); }
cudaStreamCaptureMode cuMode(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::kGlobal:
      return cudaStreamCaptureModeGlobal;
    case CaptureMode::kThreadLocal:
      return cudaStreamCaptureModeThreadLocal;
    case CaptureMode::kRelaxed:
      return cudaStreamCaptureModeRelaxed;
  }
  return cudaStreamCaptureModeGlobal;
}

class CudaRuntime final : public Runtime {
 public:
  std::string describe() const override {
    int runtime = 0;
    int driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    return "CUDA runtime " + std::to_string(runtime / 1000) + "." +
           std::to_string(runtime % 1000 / 10) + ", driver " + std::to_string(driver / 1000) + "." +
           std::to_string(driver % 1000 / 10);
  }
  bool emulated() const override { return false; }

  int deviceCount() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // no driver, or no device: a machine without GPUs
      return 0;
    }
    return n;
  }

  Result<int> currentDevice() override {
    int d = -1;
    BRAID_TRY(BRAID_CUDA_CALL(cudaGetDevice(&d)));
    return d;
  }

  Status setDevice(int device) override { return BRAID_CUDA_CALL(cudaSetDevice(device)); }

  Result<DeviceInfo> deviceInfo(int device) override {
    cudaDeviceProp p{};
    BRAID_TRY(BRAID_CUDA_CALL(cudaGetDeviceProperties(&p, device)));
    DeviceInfo info;
    info.name = p.name;
    char bus[32] = {};
    BRAID_TRY(BRAID_CUDA_CALL(cudaDeviceGetPCIBusId(bus, sizeof(bus), device)));
    info.pciBusId = bus;
    // As nvidia-smi -L and CUDA_VISIBLE_DEVICES write it.
    const auto* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
    char uuid[48];
    snprintf(uuid, sizeof(uuid),
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
    info.uuid = uuid;
    info.multiprocessors = p.multiProcessorCount;
    info.computeMajor = p.major;
    info.computeMinor = p.minor;
    info.memoryBytes = p.totalGlobalMem;
    return info;
  }

  Result<bool> canAccessPeer(int device, int peer) override {
    if (device == peer) return true;
    int can = 0;
    BRAID_TRY(BRAID_CUDA_CALL(cudaDeviceCanAccessPeer(&can, device, peer)));
    return can != 0;
  }

  Status enablePeerAccess(int peer) override {
    int current = -1;
    BRAID_TRY(BRAID_CUDA_CALL(cudaGetDevice(&current)));
    if (current == peer) return Status::success();
    const cudaError_t err = cudaDeviceEnablePeerAccess(peer, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();
      return Status::success();
    }
    return cudaStatus(err, "cudaDeviceEnablePeerAccess");
  }

  Result<void*> deviceAlloc(size_t bytes) override {
    void* p = nullptr;
    if (bytes == 0) return p;
    BRAID_TRY(BRAID_CUDA_CALL(cudaMalloc(&p, bytes)));
    return p;
  }
  Status deviceFree(void* p) override { return BRAID_CUDA_CALL(cudaFree(p)); }

  Result<void*> hostAlloc(size_t bytes) override {
    void* p = nullptr;
    BRAID_TRY(
        BRAID_CUDA_CALL(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable)));
    memset(p, 0, bytes);
    return p;
  }
  Status hostFree(void* p) override { return BRAID_CUDA_CALL(cudaFreeHost(p)); }

  Status hostRegister(void* p, size_t bytes) override {
    return BRAID_CUDA_CALL(
        cudaHostRegister(p, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable));
  }
  Status hostUnregister(void* p) override { return BRAID_CUDA_CALL(cudaHostUnregister(p)); }

  Result<PointerInfo> pointerInfo(const void* p) override {
    cudaPointerAttributes a{};
    BRAID_TRY(BRAID_CUDA_CALL(cudaPointerGetAttributes(&a, p)));
    PointerInfo info;
    switch (a.type) {
      case cudaMemoryTypeDevice:
        info.kind = MemoryKind::kDevice;
        info.device = a.device;
        break;
      case cudaMemoryTypeHost:
        info.kind = MemoryKind::kPinnedHost;
        break;
      case cudaMemoryTypeManaged:
        info.kind = MemoryKind::kManaged;
        info.device = a.device;
        break;
      default:
        info.kind = MemoryKind::kHost;
        break;
    }
    return info;
  }

  Status copy(void* dst, const void* src, size_t bytes, Stream s) override {
    if (bytes == 0) return Status::success();
    return BRAID_CUDA_CALL(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cuStream(s)));
  }
  Status fill(void* dst, int value, size_t bytes, Stream s) override {
    if (bytes == 0) return Status::success();
    return BRAID_CUDA_CALL(cudaMemsetAsync(dst, value, bytes, cuStream(s)));
  }

  Result<IpcHandle> ipcHandle(void* p) override {
    static_assert(sizeof(cudaIpcMemHandle_t) <= sizeof(IpcHandle), "IPC handles fit 64 bytes");
    cudaIpcMemHandle_t h;
    BRAID_TRY(BRAID_CUDA_CALL(cudaIpcGetMemHandle(&h, p)));
    IpcHandle out{};
    memcpy(out.bytes, &h, sizeof(h));
    return out;
  }
  bool dmabufSupported(int device) override {
    int flag = 0;
    int driver = 0;
    if (driverDeviceAttribute() == nullptr || driverMemGetHandle() == nullptr ||
        cudaDriverGetVersion(&driver) != cudaSuccess || driver < 11070) {
      cudaGetLastError();
      return false;
    }
    // CUdevice is the ordinal in the process's numbering, as cuDeviceGet returns it.
    return driverDeviceAttribute()(&flag, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device) ==
               CUDA_SUCCESS &&
           flag != 0;
  }
  Result<int> exportDmabuf(void* p, size_t bytes) override {
    MemGetHandleFn get = driverMemGetHandle();
    if (get == nullptr) {
      return Status(ErrorCode::kCudaError,
                    "cuMemGetHandleForAddressRange: the driver has none (CUDA 11.7 or newer)");
    }
    int fd = -1;
    const CUresult rc =
        get(&fd, reinterpret_cast<CUdeviceptr>(p), bytes, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (rc != CUDA_SUCCESS) {
      return Status(ErrorCode::kCudaError,
                    "cuMemGetHandleForAddressRange failed: CUresult " + std::to_string(rc));
    }
    return fd;
  }
  bool vmmSupported(int device) override { return cudaVmmSupported(device); }
  Result<void*> vmmAlloc(size_t bytes) override { return cudaVmmAlloc(bytes); }
  Status vmmFree(void* base) override { return cudaVmmFree(base); }
  Result<VmmRange> vmmRange(const void* p, size_t bytes) override { return cudaVmmRange(p, bytes); }
  Result<int> vmmExport(void* base) override { return cudaVmmExport(base); }
  Result<void*> vmmImport(int fd, size_t bytes) override { return cudaVmmImport(fd, bytes); }
  Status vmmUnmap(void* mapped) override { return cudaVmmUnmap(mapped); }
  Result<void*> ipcOpen(const IpcHandle& handle) override {
    cudaIpcMemHandle_t h;
    memcpy(&h, handle.bytes, sizeof(h));
    void* p = nullptr;
    BRAID_TRY(BRAID_CUDA_CALL(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess)));
    return p;
  }
  Status ipcClose(void* p) override { return BRAID_CUDA_CALL(cudaIpcCloseMemHandle(p)); }

  Result<Stream> streamCreate() override {
    cudaStream_t s = nullptr;
    BRAID_TRY(BRAID_CUDA_CALL(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)));
    return static_cast<Stream>(s);
  }
  Status streamDestroy(Stream s) override {
    return BRAID_CUDA_CALL(cudaStreamDestroy(cuStream(s)));
  }
  Status streamSynchronize(Stream s) override {
    return BRAID_CUDA_CALL(cudaStreamSynchronize(cuStream(s)));
  }
  Result<bool> streamCapturing(Stream s) override {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    BRAID_TRY(BRAID_CUDA_CALL(cudaStreamIsCapturing(cuStream(s), &status)));
    return status != cudaStreamCaptureStatusNone;
  }

  Result<Event> eventCreate() override {
    cudaEvent_t e = nullptr;
    BRAID_TRY(BRAID_CUDA_CALL(cudaEventCreateWithFlags(&e, cudaEventDisableTiming)));
    return static_cast<Event>(e);
  }
  Status eventDestroy(Event e) override { return BRAID_CUDA_CALL(cudaEventDestroy(cuEvent(e))); }
  Status eventRecord(Event e, Stream s) override {
    return BRAID_CUDA_CALL(cudaEventRecord(cuEvent(e), cuStream(s)));
  }
  Status streamWaitEvent(Stream s, Event e) override {
    return BRAID_CUDA_CALL(cudaStreamWaitEvent(cuStream(s), cuEvent(e), 0));
  }
  Status eventRecordExternal(Event e, Stream s) override {
    return BRAID_CUDA_CALL(
        cudaEventRecordWithFlags(cuEvent(e), cuStream(s), cudaEventRecordExternal));
  }
  Status streamWaitEventExternal(Stream s, Event e) override {
    return BRAID_CUDA_CALL(cudaStreamWaitEvent(cuStream(s), cuEvent(e), cudaEventWaitExternal));
  }
  Status eventSynchronize(Event e) override {
    return BRAID_CUDA_CALL(cudaEventSynchronize(cuEvent(e)));
  }
  Result<bool> eventDone(Event e) override {
    const cudaError_t err = cudaEventQuery(cuEvent(e));
    if (err == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    BRAID_TRY(cudaStatus(err, "cudaEventQuery"));
    return true;
  }

  Status hostCallback(Stream s, void (*fn)(void*), void* arg) override {
    return BRAID_CUDA_CALL(cudaLaunchHostFunc(cuStream(s), fn, arg));
  }

  Status launch(const Launch& l, Stream s) override {
    if (l.deviceFunction == nullptr) {
      return invalidUsage("this kernel was not compiled for the GPU (braid built without CUDA?)");
    }
    const LaunchKernelFn driver = driverLaunchKernel();
    if (driver == nullptr || l.argBytes == l.paramBytes) {
      void* params[] = {const_cast<void*>(l.args)};
      return BRAID_CUDA_CALL(cudaLaunchKernel(l.deviceFunction, dim3(l.blocks),
                                              dim3(l.threadsPerBlock), params, 0, cuStream(s)));
    }
    cudaFunction_t fn = nullptr;
    BRAID_TRY(BRAID_CUDA_CALL(cudaGetFuncBySymbol(&fn, l.deviceFunction)));
    size_t bytes = l.argBytes;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, const_cast<void*>(l.args),
                     CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes, CU_LAUNCH_PARAM_END};
    const CUresult launched = driver(fn, l.blocks, 1, 1, l.threadsPerBlock, 1, 1, 0,
                                     static_cast<CUstream>(cuStream(s)), nullptr, extra);
    if (launched == CUDA_SUCCESS) return Status::success();
    return Status(ErrorCode::kCudaError, "cuLaunchKernel of the engine kernel (" +
                                             std::to_string(bytes) +
                                             " parameter bytes) failed: CUresult " +
                                             std::to_string(static_cast<int>(launched)));
  }

  Result<int> residentBlocksPerSm(const Launch& kernel) override {
    if (kernel.deviceFunction == nullptr) {
      return invalidUsage("this kernel was not compiled for the GPU (braid built without CUDA?)");
    }
    int blocks = 0;
    BRAID_TRY(BRAID_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, kernel.deviceFunction, static_cast<int>(kernel.threadsPerBlock), 0)));
    return blocks;
  }

  Status deviceSynchronize() override { return BRAID_CUDA_CALL(cudaDeviceSynchronize()); }

  Status beginCapture(Stream s, CaptureMode mode) override {
    return BRAID_CUDA_CALL(cudaStreamBeginCapture(cuStream(s), cuMode(mode)));
  }
  Result<Graph> endCapture(Stream s) override {
    cudaGraph_t graph = nullptr;
    BRAID_TRY(BRAID_CUDA_CALL(cudaStreamEndCapture(cuStream(s), &graph)));
    cudaGraphExec_t exec = nullptr;
    Status made = BRAID_CUDA_CALL(cudaGraphInstantiate(&exec, graph, 0));
    (void)cudaGraphDestroy(graph);  // the instance keeps what it needs
    BRAID_TRY(made);
    return static_cast<Graph>(exec);
  }
  Status graphLaunch(Graph g, Stream s) override {
    return BRAID_CUDA_CALL(cudaGraphLaunch(static_cast<cudaGraphExec_t>(g), cuStream(s)));
  }
  Status graphDestroy(Graph g) override {
    return BRAID_CUDA_CALL(cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(g)));
  }
  CaptureMode exchangeCaptureMode(CaptureMode mode) override {
    cudaStreamCaptureMode m = cuMode(mode);
    if (cudaThreadExchangeStreamCaptureMode(&m) != cudaSuccess) {
      cudaGetLastError();
      return mode;
    }
    return m == cudaStreamCaptureModeGlobal        ? CaptureMode::kGlobal
           : m == cudaStreamCaptureModeThreadLocal ? CaptureMode::kThreadLocal
                                                   : CaptureMode::kRelaxed;
  }
};

}  // namespace

std::unique_ptr<Runtime> makeCudaRuntime() { return std::make_unique<CudaRuntime>(); }

}  // namespace braid::gpu

#endif  // BRAID_HAVE_CUDA
