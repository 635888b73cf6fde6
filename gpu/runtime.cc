// Choosing the process's Runtime (gpu/runtime.h), and the runtime of a
// build without CUDA.
#include "gpu/runtime.h"

#include <atomic>
#include <cstdlib>

#include "base/env.h"
#include "base/log.h"

namespace braid::gpu {

#if defined(BRAID_HAVE_CUDA)
std::unique_ptr<Runtime> makeCudaRuntime();
#endif

namespace {

/// No devices; every call says why.
class NoGpuRuntime final : public Runtime {
 public:
  std::string describe() const override { return "none (braid was built without CUDA)"; }
  bool emulated() const override { return false; }
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
  Result<PointerInfo> pointerInfo(const void*) override { return PointerInfo{}; }
  Status copy(void*, const void*, size_t, Stream) override { return refuse(); }
  Status fill(void*, int, size_t, Stream) override { return refuse(); }
  Result<IpcHandle> ipcHandle(void*) override { return refuse(); }
  Result<void*> ipcOpen(const IpcHandle&) override { return refuse(); }
  Status ipcClose(void*) override { return refuse(); }
  Result<Stream> streamCreate() override { return refuse(); }
  Status streamDestroy(Stream) override { return refuse(); }
  Status streamSynchronize(Stream) override { return refuse(); }
  Result<bool> streamCapturing(Stream) override { return refuse(); }
  Result<Event> eventCreate() override { return refuse(); }
  Status eventDestroy(Event) override { return refuse(); }
  Status eventRecord(Event, Stream) override { return refuse(); }
  Status streamWaitEvent(Stream, Event) override { return refuse(); }
  Status eventSynchronize(Event) override { return refuse(); }
  Result<bool> eventDone(Event) override { return refuse(); }
  Status hostCallback(Stream, void (*)(void*), void*) override { return refuse(); }
  Status launch(const Launch&, Stream) override { return refuse(); }
  Status deviceSynchronize() override { return refuse(); }

 private:
  static Status refuse() {
    return invalidUsage(
        "no GPU runtime: braid was built without CUDA (set BRAID_EMULATE_GPUS=<n> for an "
        "emulated GPU)");
  }
};

std::unique_ptr<Runtime> chooseRuntime() {
  // Read here, once, rather than in Config: the runtime is the process's,
  // chosen before any communicator exists (a program allocates its buffers
  // first), like the logger's level.
  const int64_t emulated = env::getInt("EMULATE_GPUS", 0);
  if (emulated > 0) {
    BRAID_INFO("gpu: BRAID_EMULATE_GPUS=%lld: an emulated GPU (host memory and threads)",
               static_cast<long long>(emulated));
    return makeEmulatedRuntime(static_cast<int>(emulated));
  }
#if defined(BRAID_HAVE_CUDA)
  return makeCudaRuntime();
#else
  return std::make_unique<NoGpuRuntime>();
#endif
}

std::atomic<Runtime*> replaced{nullptr};

}  // namespace

Runtime& runtime() {
  if (Runtime* r = replaced.load(std::memory_order_acquire)) return *r;
  // Never destroyed, as a CUDA context is not torn down at exit: its streams
  // may still run work (an emulated kernel waiting for a peer), and waiting
  // for them in a static destructor could block the exit.
  static Runtime* const process = chooseRuntime().release();
  return *process;
}

ScopedRuntime::ScopedRuntime(Runtime& replacement) : previous_(replaced.exchange(&replacement)) {}
ScopedRuntime::~ScopedRuntime() { replaced.store(previous_); }

}  // namespace braid::gpu
