// Choosing the process's Runtime (gpu/runtime.h), the runtime of a build without CUDA, and the
// one a child forked after the GPU was used gets.
#include "gpu/runtime.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <utility>

#include "base/env.h"
#include "base/log.h"
#include "gpu/visible_devices.h"

namespace braid::gpu {

#if defined(BRAID_HAVE_CUDA)
std::unique_ptr<Runtime> makeCudaRuntime();
#endif

namespace {

/// A runtime that refuses every call, saying why: the runtime of a build without CUDA (no
/// devices, which is a usable state: communicators run on host memory), and the one a forked
/// child of a process that had used the GPU sees (not usable at all).
class RefusingRuntime final : public Runtime {
 public:
  RefusingRuntime(std::string description, std::string why, bool usable)
      : description_(std::move(description)), why_(std::move(why)), usable_(usable) {}

  std::string describe() const override { return description_; }
  bool emulated() const override { return false; }
  Status usable() override { return usable_ ? Status::success() : refuse(); }
  int deviceCount() override { return 0; }
  Result<int> currentDevice() override { return refuse(); }
  Status setDevice(int) override { return refuse(); }
  Result<DeviceInfo> deviceInfo(int) override { return refuse(); }
  Result<bool> canAccessPeer(int, int) override { return refuse(); }
  Status enablePeerAccess(int) override { return refuse(); }
  Result<void*> deviceAlloc(size_t) override { return refuse(); }
  Status deviceFree(void*) override { return refuse(); }
  Result<void*> hostAlloc(size_t) override { return refuse(); }
  Status hostFree(void*) override { return refuse(); }
  Status hostRegister(void*, size_t) override { return refuse(); }
  Status hostUnregister(void*) override { return refuse(); }
  Result<PointerInfo> pointerInfo(const void*) override {
    if (usable_) return PointerInfo{};
    return refuse();
  }
  Status copy(void*, const void*, size_t, Stream) override { return refuse(); }
  Status fill(void*, int, size_t, Stream) override { return refuse(); }
  Result<IpcHandle> ipcHandle(void*) override { return refuse(); }
  Result<void*> ipcOpen(const IpcHandle&) override { return refuse(); }
  Status ipcClose(void*) override { return refuse(); }
  bool vmmSupported(int) override { return false; }
  Result<void*> vmmAlloc(size_t) override { return refuse(); }
  Status vmmFree(void*) override { return refuse(); }
  Result<VmmRange> vmmRange(const void*, size_t) override { return refuse(); }
  Result<int> vmmExport(void*) override { return refuse(); }
  Result<void*> vmmImport(int, size_t) override { return refuse(); }
  Status vmmUnmap(void*) override { return refuse(); }
  bool dmabufSupported(int) override { return false; }
  Result<int> exportDmabuf(void*, size_t) override { return refuse(); }
  Result<Stream> streamCreate() override { return refuse(); }
  Status streamDestroy(Stream) override { return refuse(); }
  Status streamSynchronize(Stream) override { return refuse(); }
  Result<bool> streamCapturing(Stream) override { return refuse(); }
  Result<Event> eventCreate() override { return refuse(); }
  Status eventDestroy(Event) override { return refuse(); }
  Status eventRecord(Event, Stream) override { return refuse(); }
  Status streamWaitEvent(Stream, Event) override { return refuse(); }
  Status eventRecordExternal(Event, Stream) override { return refuse(); }
  Status streamWaitEventExternal(Stream, Event) override { return refuse(); }
  Status eventSynchronize(Event) override { return refuse(); }
  Result<bool> eventDone(Event) override { return refuse(); }
  Status hostCallback(Stream, void (*)(void*), void*) override { return refuse(); }
  Status launch(const Launch&, Stream) override { return refuse(); }
  Result<int> residentBlocksPerSm(const Launch&) override { return refuse(); }
  Status deviceSynchronize() override { return refuse(); }
  Status beginCapture(Stream, CaptureMode) override { return refuse(); }
  Result<Graph> endCapture(Stream) override { return refuse(); }
  Status graphLaunch(Graph, Stream) override { return refuse(); }
  Status graphDestroy(Graph) override { return refuse(); }
  CaptureMode exchangeCaptureMode(CaptureMode mode) override { return mode; }

 private:
  Status refuse() const { return invalidUsage(why_); }

  const std::string description_;
  const std::string why_;
  const bool usable_;
};

constexpr int kMaxEmulatedThreadsPerBlock = 64;
constexpr int kMaxEmulatedMultiprocessors = 1024;
constexpr int kMaxEmulatedBlocksPerSm = 32;

/// BRAID_<name> for the emulated GPU's shape: `fallback` when unset or outside [1, most].
int emulatedKnob(const char* name, int fallback, int most) {
  const int64_t value = env::getInt(name, fallback);
  if (value >= 1 && value <= most) return static_cast<int>(value);
  BRAID_WARN("gpu: BRAID_%s=%lld is outside [1, %d]; using %d", name, static_cast<long long>(value),
             most, fallback);
  return fallback;
}

/// The device pairs of the variable `name` (a>b,...), warned about and ignored where malformed.
std::vector<std::pair<int, int>> devicePairsOf(const char* name) {
  const std::optional<std::string> spec = env::raw(name);
  if (!spec) return {};
  const auto pairs = parseDevicePairs(*spec);
  if (pairs) return *pairs;
  BRAID_WARN("gpu: %s=\"%s\" is not a list of a>b; ignored", name, spec->c_str());
  return {};
}

std::unique_ptr<Runtime> chooseRuntime() {
  // Read here, once, rather than in Config: the runtime is the process's,
  // chosen before any communicator exists (a program allocates its buffers
  // first), like the logger's level.
  const int64_t emulated = env::getInt("EMULATE_GPUS", 0);
  if (emulated > 0) {
    // A block is a team of threads, as on a GPU, so that the engine's barriers, shared values
    // and strides run on the CPU too; BRAID_EMULATE_GPU_THREADS=1 makes each block one thread.
    EmulatedShape shape;
    shape.devices = static_cast<int>(emulated);
    std::vector<std::string> uuids;
    for (int d = 0; d < shape.devices; ++d) uuids.push_back(emulatedUuid(d));
    shape.noPeerAccess = devicePairsOf("BRAID_EMULATE_GPU_NO_P2P");
    shape.corruptPeerWrites = devicePairsOf("BRAID_EMULATE_GPU_BAD_P2P");
    shape.dmabuf = env::getInt("EMULATE_GPU_NO_DMABUF", 0) == 0;
    // What this process sees of the machine's devices, as CUDA would show it.
    shape.visible = visibleDevices(env::raw("CUDA_VISIBLE_DEVICES"), uuids);
    if (shape.visible.empty()) {
      // As CUDA with no device to show: no GPU, and a communicator runs on host memory.
      const std::string spec = env::raw("CUDA_VISIBLE_DEVICES").value_or("");
      return std::make_unique<RefusingRuntime>(
          "emulated, no device visible",
          "no GPU: CUDA_VISIBLE_DEVICES=\"" + spec + "\" leaves none of the " +
              std::to_string(shape.devices) + " emulated GPUs visible",
          /*usable=*/true);
    }
    shape.threadsPerBlock =
        emulatedKnob("EMULATE_GPU_THREADS", kEmulatedThreadsPerBlock, kMaxEmulatedThreadsPerBlock);
    // Multiprocessors and the blocks each holds: what bounds the ranks one device can carry
    // (comm/gpu_channels.h); a test makes them small to see the bound act.
    shape.multiprocessors =
        emulatedKnob("EMULATE_GPU_SMS", kEmulatedMultiprocessors, kMaxEmulatedMultiprocessors);
    shape.blocksPerSm =
        emulatedKnob("EMULATE_GPU_BLOCKS_PER_SM", kEmulatedBlocksPerSm, kMaxEmulatedBlocksPerSm);
    BRAID_INFO(
        "gpu: BRAID_EMULATE_GPUS=%d: an emulated GPU (host memory and threads, %d per block; "
        "%d multiprocessors of %d blocks each), %zu of its devices visible",
        shape.devices, shape.threadsPerBlock, shape.multiprocessors, shape.blocksPerSm,
        shape.visible.size());
    return makeEmulatedRuntime(shape);
  }
#if defined(BRAID_HAVE_CUDA)
  return makeCudaRuntime();
#else
  return std::make_unique<RefusingRuntime>(
      "none (braid was built without CUDA)",
      "no GPU runtime: braid was built without CUDA (set BRAID_EMULATE_GPUS=<n> for an "
      "emulated GPU)",
      /*usable=*/true);
#endif
}

std::atomic<Runtime*> replaced{nullptr};
/// Set in a child forked after this process made its runtime (pthread_atfork).
std::atomic<bool> forkedAfterUse{false};
pid_t parentThatUsedIt = 0;

}  // namespace

Runtime& runtime() {
  if (Runtime* r = replaced.load(std::memory_order_acquire)) return *r;
  // Never destroyed, as a CUDA context is not torn down at exit: its streams
  // may still run work (an emulated kernel waiting for a peer), and waiting
  // for them in a static destructor could block the exit.
  static Runtime* const process = [] {
    Runtime* made = chooseRuntime().release();
    // CUDA duplicates none of its state into a forked child, so a child's calls are undefined
    // behaviour (and the emulated GPU's streams are threads the child does not have): a child
    // forked after this point gets a runtime that refuses every call, saying so, rather than
    // a context that is not there. Without devices there is no such state, and a host-memory
    // program may fork as it likes.
    if (made->deviceCount() > 0) {
      parentThatUsedIt = getpid();
      pthread_atfork(nullptr, nullptr, [] { forkedAfterUse.store(true); });
    }
    return made;
  }();
  if (forkedAfterUse.load(std::memory_order_relaxed)) {
    static RefusingRuntime forked(
        "unusable (the GPU runtime was used before this process was forked)",
        "this process was forked from process " + std::to_string(parentThatUsedIt) +
            " after that process used the GPU runtime, and CUDA cannot be used in such a child "
            "(it duplicates none of its state): make the processes before any CUDA call (an "
            "ncclCommInitRank on a GPU, cudaGetDeviceCount, cudaMalloc), or exec after fork",
        /*usable=*/false);
    return forked;
  }
  return *process;
}

ScopedRuntime::ScopedRuntime(Runtime& replacement) : previous_(replaced.exchange(&replacement)) {}
ScopedRuntime::~ScopedRuntime() { replaced.store(previous_); }

}  // namespace braid::gpu
