// The one seam between braid and the CUDA runtime. Every CUDA call braid
// makes (devices, memory, IPC, streams, events, launches) goes through a
// Runtime, and the process has one:
//
//   the CUDA runtime (gpu/cuda_runtime.cc), when braid is built with CUDA;
//   an emulated GPU (emulation/gpu/emulated_runtime.cc) when BRAID_EMULATE_GPUS=<n>
//     asks for n devices, or a test installs one: device memory is host
//     memory in shm segments (shareable between processes for IPC), a
//     stream is an in-order queue run by a worker thread, an event marks a
//     point in it, and a launch runs the CPU instance of the kernel;
//   none (gpu/runtime.cc): zero devices, every call refused, when
//     braid is built without CUDA and nothing asks for the emulation;
//   unusable (gpu/runtime.cc): in a child forked after its parent used the
//     runtime, every call refused, saying so.
//
// Streams and events are opaque handles: cudaStream_t / cudaEvent_t on the
// real runtime, the emulator's objects on the emulated one. A null stream
// is the current device's default stream, as in CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "braid/status.h"

namespace braid::kernels::engine {
class ThreadTeam;  // kernels/engine/thread_team.h: one thread of a block on the CPU
}  // namespace braid::kernels::engine

namespace braid::gpu {

using Stream = void*;
using Event = void*;
/// An instantiated graph (cudaGraphExec_t), or the emulator's.
using Graph = void*;

/// How one thread's calls meet captures (cudaStreamCaptureMode). A thread in kGlobal mode (CUDA's
/// default) may not make a potentially unsafe call (allocating, freeing, synchronizing) while it
/// captures a stream, or while any thread captures one in kGlobal mode; in kThreadLocal only
/// while it captures one itself; in kRelaxed never. A capture's mode, given at its start, says
/// whether it restricts other threads (kGlobal) or only its own (the others).
enum class CaptureMode { kGlobal = 0, kThreadLocal = 1, kRelaxed = 2 };

struct DeviceInfo {
  std::string name;      ///< "NVIDIA H200", "emulated GPU 0"
  std::string pciBusId;  ///< "0000:19:00.0": what names a GPU across processes
  std::string uuid;      ///< "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"
  int multiprocessors = 0;
  int computeMajor = 0;
  int computeMinor = 0;
  uint64_t memoryBytes = 0;
};

/// Where a pointer points.
enum class MemoryKind {
  kHost,        ///< ordinary host memory the device cannot address
  kPinnedHost,  ///< host memory the device addresses (hostAlloc, hostRegister)
  kDevice,      ///< a device's memory (deviceAlloc, or mapped from a peer by ipcOpen)
  kManaged,     ///< managed memory, addressable from host and device
};

struct PointerInfo {
  MemoryKind kind = MemoryKind::kHost;
  int device = -1;  ///< the device of kDevice memory
};

/// An opaque handle naming device memory to another process
/// (cudaIpcMemHandle_t, or the emulator's segment name).
struct IpcHandle {
  unsigned char bytes[64];
};

/// Where a range of shareable memory lies in its allocation (Runtime::vmmRange).
struct VmmRange {
  void* base = nullptr;  ///< the allocation's start
  size_t bytes = 0;      ///< the allocation's size (a multiple of its granularity)
};

/// What a launch runs: the __global__ function for the CUDA runtime, and
/// its CPU instance for the emulated GPU (one call per thread of each block,
/// the block's threads a team). Both take one parameter of `paramBytes` (its declared size),
/// at `args`, of which only the first `argBytes` are passed: the launch copies those and leaves
/// the rest undefined, as cuLaunchKernel does with CU_LAUNCH_PARAM_BUFFER_SIZE, so a small call
/// costs a small copy. The kernel must not read past what it was given.
struct Launch {
  const void* deviceFunction = nullptr;
  void (*hostFunction)(const void* args, unsigned block, unsigned blocks,
                       const kernels::engine::ThreadTeam& team) = nullptr;
  const void* args = nullptr;  ///< paramBytes of storage
  size_t argBytes = 0;         ///< what is passed: at most paramBytes
  size_t paramBytes = 0;
  unsigned blocks = 1;
  unsigned threadsPerBlock = 1;
};

class Runtime {
 public:
  virtual ~Runtime() = default;

  /// "CUDA 13.0", "emulated (4 GPUs)", "none (built without CUDA)".
  virtual std::string describe() const = 0;
  virtual bool emulated() const = 0;

  /// Whether this process may use the runtime at all: an error naming the cause in a child
  /// forked after its parent used the GPU (CUDA cannot serve it); success otherwise, with or
  /// without devices.
  virtual Status usable() { return Status::success(); }
  // Devices. deviceCount() is 0, never an error, where none can be used.
  virtual int deviceCount() = 0;
  virtual Result<int> currentDevice() = 0;
  virtual Status setDevice(int device) = 0;
  virtual Result<DeviceInfo> deviceInfo(int device) = 0;
  /// Whether `device` can address `peer`'s memory directly.
  virtual Result<bool> canAccessPeer(int device, int peer) = 0;
  /// Lets the current device address `peer`'s memory by pointer, within
  /// this process (memory of other processes comes through ipcOpen).
  /// Succeeds if it already can.
  virtual Status enablePeerAccess(int peer) = 0;

  // Memory. deviceAlloc allocates on the current device.
  virtual Result<void*> deviceAlloc(size_t bytes) = 0;
  virtual Status deviceFree(void* pointer) = 0;
  /// Pinned host memory that every device addresses at the same pointer.
  virtual Result<void*> hostAlloc(size_t bytes) = 0;
  virtual Status hostFree(void* pointer) = 0;
  /// Pins existing host memory (a shared segment) so devices address it
  /// at the same pointer.
  virtual Status hostRegister(void* pointer, size_t bytes) = 0;
  virtual Status hostUnregister(void* pointer) = 0;
  virtual Result<PointerInfo> pointerInfo(const void* pointer) = 0;
  /// Asynchronous copy in any direction, ordered on `stream`.
  virtual Status copy(void* dst, const void* src, size_t bytes, Stream stream) = 0;
  /// Asynchronous memset, ordered on `stream`.
  virtual Status fill(void* dst, int value, size_t bytes, Stream stream) = 0;

  // IPC. ipcHandle takes the start of a deviceAlloc allocation.
  virtual Result<IpcHandle> ipcHandle(void* deviceMemory) = 0;
  /// Maps another process's allocation; fails for this process's own, as CUDA does.
  virtual Result<void*> ipcOpen(const IpcHandle& handle) = 0;
  virtual Status ipcClose(void* mapped) = 0;

  // Shareable device memory (CUDA virtual memory: cuMemCreate with a POSIX file descriptor
  // handle, cuMemAddressReserve, cuMemMap, cuMemSetAccess): what ncclMemAlloc hands out, so that
  // the other processes of the host can map it (symmetric memory windows,
  // docs/symmetric-memory.md).
  /// Whether `device` makes such memory (CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED
  /// and POSIX file descriptor handles).
  virtual bool vmmSupported(int device) = 0;
  /// At least `bytes` (rounded up to the allocation granularity) of shareable memory on the current
  /// device, readable and writable by it and by every device that reaches it by peer access.
  virtual Result<void*> vmmAlloc(size_t bytes) = 0;
  /// Unmaps and releases a vmmAlloc allocation, given its start.
  virtual Status vmmFree(void* base) = 0;
  /// The shareable allocation holding [pointer, pointer + bytes): its start and size. Fails for
  /// memory that is not (cudaMalloc'd memory, host memory, a range leaving the allocation), as
  /// cuMemRetainAllocationHandle fails for it.
  virtual Result<VmmRange> vmmRange(const void* pointer, size_t bytes) = 0;
  /// A POSIX file descriptor naming the shareable allocation that starts at `base`
  /// (cuMemExportToShareableHandle); the caller closes it. It means something to another process
  /// only once passed there (SCM_RIGHTS), as any descriptor.
  virtual Result<int> vmmExport(void* base) = 0;
  /// Maps the allocation an exported descriptor names (`bytes`, its size) at a new address of this
  /// process, readable and writable by the current device (cuMemImportFromShareableHandle,
  /// cuMemAddressReserve, cuMemMap, cuMemSetAccess). The descriptor stays the caller's.
  virtual Result<void*> vmmImport(int fd, size_t bytes) = 0;
  /// Unmaps what vmmImport mapped at `mapped`.
  virtual Status vmmUnmap(void* mapped) = 0;

  // GPUDirect RDMA. A NIC reaches device memory through a dmabuf the driver exports
  // (cuMemGetHandleForAddressRange, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD).
  /// Whether `device` exports dmabufs (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, CUDA 11.7 on).
  virtual bool dmabufSupported(int device) = 0;
  /// A dmabuf descriptor for [deviceMemory, deviceMemory + bytes), both multiples of the host
  /// page; the caller closes it (an importer that registered it keeps its own reference).
  virtual Result<int> exportDmabuf(void* deviceMemory, size_t bytes) = 0;

  // Streams and events.
  /// A stream of the current device that does not synchronize with the
  /// default stream (cudaStreamNonBlocking).
  virtual Result<Stream> streamCreate() = 0;
  virtual Status streamDestroy(Stream stream) = 0;
  virtual Status streamSynchronize(Stream stream) = 0;
  /// Whether the stream is being captured into a CUDA graph.
  virtual Result<bool> streamCapturing(Stream stream) = 0;
  virtual Result<Event> eventCreate() = 0;
  virtual Status eventDestroy(Event event) = 0;
  /// Marks the current end of `stream`.
  virtual Status eventRecord(Event event, Stream stream) = 0;
  /// Makes later work on `stream` wait until the event's last record completes.
  virtual Status streamWaitEvent(Stream stream, Event event) = 0;
  /// On a stream being captured, what every replay of the graph does when it gets there: a
  /// record of `event` (cudaEventRecordWithFlags with cudaEventRecordExternal), or a wait for
  /// the record of `event` last made before the replay was launched, by eager work or another
  /// replay (cudaStreamWaitEvent with cudaEventWaitExternal). Outside a capture, eventRecord and
  /// streamWaitEvent. What orders a communicator's replays with its eager launches.
  virtual Status eventRecordExternal(Event event, Stream stream) = 0;
  virtual Status streamWaitEventExternal(Stream stream, Event event) = 0;
  virtual Status eventSynchronize(Event event) = 0;
  /// Whether the event's last record has completed.
  virtual Result<bool> eventDone(Event event) = 0;
  /// Runs fn(arg) on a host thread once the stream reaches this point.
  virtual Status hostCallback(Stream stream, void (*fn)(void*), void* arg) = 0;
  virtual Status launch(const Launch& launch, Stream stream) = 0;
  /// How many blocks of `kernel` (its deviceFunction, threadsPerBlock threads each) one
  /// multiprocessor of the current device holds at once
  /// (cudaOccupancyMaxActiveBlocksPerMultiprocessor): with DeviceInfo::multiprocessors, how
  /// many of its blocks can spin at the same time.
  virtual Result<int> residentBlocksPerSm(const Launch& kernel) = 0;
  /// Waits for all work of the current device.
  virtual Status deviceSynchronize() = 0;

  // Graph capture (CUDA graphs), as PyTorch uses it.
  /// Starts capturing `stream` (cudaStreamBeginCapture): its work is recorded, not run.
  virtual Status beginCapture(Stream stream, CaptureMode mode) = 0;
  /// Ends the capture of `stream` and instantiates what it recorded (cudaStreamEndCapture,
  /// cudaGraphInstantiate); fails if a call the capture's mode forbids was made meanwhile.
  virtual Result<Graph> endCapture(Stream stream) = 0;
  /// Runs an instantiated graph on `stream` (cudaGraphLaunch).
  virtual Status graphLaunch(Graph graph, Stream stream) = 0;
  virtual Status graphDestroy(Graph graph) = 0;
  /// Sets this thread's capture mode and returns the one it had
  /// (cudaThreadExchangeStreamCaptureMode).
  virtual CaptureMode exchangeCaptureMode(CaptureMode mode) = 0;
};

/// This thread in relaxed capture mode while it lives, as NCCL puts itself around the
/// allocations and synchronizations of a call's first use: a call made while the user's stream
/// (or another thread's) is captured in global mode may still set itself up on a private stream.
class RelaxedCapture {
 public:
  explicit RelaxedCapture(Runtime& runtime)
      : runtime_(runtime), previous_(runtime.exchangeCaptureMode(CaptureMode::kRelaxed)) {}
  ~RelaxedCapture() { runtime_.exchangeCaptureMode(previous_); }
  RelaxedCapture(const RelaxedCapture&) = delete;
  RelaxedCapture& operator=(const RelaxedCapture&) = delete;

 private:
  Runtime& runtime_;
  const CaptureMode previous_;
};

/// The process's runtime, chosen at first use: emulated when
/// BRAID_EMULATE_GPUS is a positive count, else CUDA (or none).
Runtime& runtime();

/// Threads of an emulated block unless BRAID_EMULATE_GPU_THREADS says: enough that the leader's
/// waits, the team's barriers and its strides all run; few enough that a 2-core machine runs
/// several ranks' blocks.
inline constexpr int kEmulatedThreadsPerBlock = 4;

/// Multiprocessors of an emulated device unless BRAID_EMULATE_GPU_SMS says, and engine blocks
/// each holds at once unless BRAID_EMULATE_GPU_BLOCKS_PER_SM says (what a real SM holds of a
/// 512-thread block capped at 64 registers a thread). Small, so that the co-residency rules of
/// comm/gpu_channels.h bind in tests as they would on a GPU with more ranks.
inline constexpr int kEmulatedMultiprocessors = 16;
inline constexpr int kEmulatedBlocksPerSm = 2;

/// The shape of an emulated GPU.
struct EmulatedShape {
  int devices = 1;  ///< the machine's
  /// The machine's devices this process sees, in its numbering (CUDA_VISIBLE_DEVICES,
  /// visible_devices.h); empty: all of them.
  std::vector<int> visible;
  /// Pairs (a, b) of the machine's devices where a cannot reach b's memory (canAccessPeer(a, b)
  /// is false), as on machines whose GPUs lack peer access one way or both
  /// (BRAID_EMULATE_GPU_NO_P2P=a>b,...).
  std::vector<std::pair<int, int>> noPeerAccess;
  /// Pairs (a, b) where a says it reaches b's memory but what a's copies write there arrives
  /// corrupt, as peer traffic on a VM whose IOMMU or PCIe switches break it
  /// (BRAID_EMULATE_GPU_BAD_P2P=a>b,...). Only copies are spoiled: the emulated kernels store
  /// through plain host pointers, which nothing can intercept.
  std::vector<std::pair<int, int>> corruptPeerWrites;
  int threadsPerBlock = kEmulatedThreadsPerBlock;  ///< threads of each block's team
  int multiprocessors = kEmulatedMultiprocessors;
  int blocksPerSm = kEmulatedBlocksPerSm;
  /// Whether the devices export dmabufs, as GPUs and drivers since CUDA 11.7 do; false models an
  /// older driver (BRAID_EMULATE_GPU_NO_DMABUF=1).
  bool dmabuf = true;
};

/// Makes an emulated GPU of that shape (emulation/gpu/emulated_runtime.cc).
std::unique_ptr<Runtime> makeEmulatedRuntime(const EmulatedShape& shape);
/// The same with `devices` devices whose blocks are teams of `threadsPerBlock` threads.
inline std::unique_ptr<Runtime> makeEmulatedRuntime(
    int devices, int threadsPerBlock = kEmulatedThreadsPerBlock) {
  EmulatedShape shape;
  shape.devices = devices;
  shape.threadsPerBlock = threadsPerBlock;
  return makeEmulatedRuntime(shape);
}

/// Makes `device` current for a call of a communicator on it, and leaves the calling thread's
/// current device as the caller had it afterwards (NCCL's calls do the same). Asks for the
/// current device once; sets it, and sets it back, only where the caller's differed. No runtime
/// (a host communicator, which must not start one) does nothing.
class DeviceGuard {
 public:
  DeviceGuard(Runtime* rt, int device) : rt_(rt), device_(device) {
    if (rt_ == nullptr) return;
    Result<int> current = rt_->currentDevice();
    saved_ = current.ok() ? current.value() : -1;
    // Only a change costs a call: the calls within run on `device` without setting it again.
    if (saved_ != device_ && device_ >= 0) (void)rt_->setDevice(device_);
  }
  ~DeviceGuard() {
    if (rt_ != nullptr && saved_ >= 0 && saved_ != device_) (void)rt_->setDevice(saved_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  Runtime* rt_;
  int device_;
  int saved_ = -1;
};

/// Makes `replacement` the process's runtime until the returned guard goes
/// out of scope; for tests of internals that run on an emulated GPU.
class ScopedRuntime {
 public:
  explicit ScopedRuntime(Runtime& replacement);
  ~ScopedRuntime();
  ScopedRuntime(const ScopedRuntime&) = delete;
  ScopedRuntime& operator=(const ScopedRuntime&) = delete;

 private:
  Runtime* previous_;
};

}  // namespace braid::gpu
