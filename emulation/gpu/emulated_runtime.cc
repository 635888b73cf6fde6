// The emulated GPU: the Runtime of gpu/runtime.h on host memory and threads,
// for tests and for machines without a GPU (BRAID_EMULATE_GPUS=<n>).
//
// What it keeps of CUDA's semantics, because braid's correctness rests on
// them: work on a stream runs in order and after the call that enqueued it
// returns; an event wait holds a stream until the record it names has run;
// a launch's blocks run at once, each a team of threads (thread_team.h) that
// start in a shuffled order; device memory can be mapped by another
// process through an IPC handle, and not by the process that made it;
// copies with pageable host memory behave as CUDA's (staged at the call
// from it, finished at return into it).
// What it leaves out: graph capture (streamCapturing is always false), the
// legacy default stream's implicit synchronization with other streams
// (braid never relies on it), and any notion of speed.
#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/dma_copy.h"
#include "emulation/gpu/emulated_memory.h"
#include "emulation/gpu/emulated_stream.h"
#include "gpu/runtime.h"

namespace braid::gpu {
namespace {

thread_local int tlsDevice = 0;

class EmulatedRuntime final : public Runtime {
 public:
  EmulatedRuntime(int devices, int threadsPerBlock)
      : devices_(devices), threadsPerBlock_(static_cast<unsigned>(threadsPerBlock)) {}

  ~EmulatedRuntime() override {
    // Streams finish their queued work before memory goes away.
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.clear();
    defaultStreams_.clear();
  }

  std::string describe() const override {
    return "emulated (" + std::to_string(devices_) + " GPU" + (devices_ == 1 ? "" : "s") +
           ", host memory and threads)";
  }
  bool emulated() const override { return true; }

  int deviceCount() override { return devices_; }
  Result<int> currentDevice() override { return tlsDevice; }

  Status setDevice(int device) override {
    BRAID_TRY(checkDevice(device));
    tlsDevice = device;
    return Status::success();
  }

  Result<DeviceInfo> deviceInfo(int device) override {
    BRAID_TRY(checkDevice(device));
    DeviceInfo info;
    info.name = "emulated GPU " + std::to_string(device);
    char bus[32];
    snprintf(bus, sizeof(bus), "0000:%02x:00.0", 0xe0 + device % 32);
    info.pciBusId = bus;
    info.multiprocessors = 4;
    info.computeMajor = 9;
    info.computeMinor = 0;
    info.memoryBytes = uint64_t{1} << 30;
    return info;
  }

  Result<bool> canAccessPeer(int device, int peer) override {
    BRAID_TRY(checkDevice(device));
    BRAID_TRY(checkDevice(peer));
    return true;  // all emulated devices share the host's memory
  }

  Status enablePeerAccess(int peer) override { return checkDevice(peer); }

  Result<void*> deviceAlloc(size_t bytes) override { return memory_.deviceAlloc(bytes, tlsDevice); }
  Status deviceFree(void* p) override { return memory_.deviceFree(p); }
  Result<void*> hostAlloc(size_t bytes) override { return memory_.hostAlloc(bytes); }
  Status hostFree(void* p) override { return memory_.hostFree(p); }
  Status hostRegister(void* p, size_t bytes) override { return memory_.hostRegister(p, bytes); }
  Status hostUnregister(void* p) override { return memory_.hostUnregister(p); }
  Result<PointerInfo> pointerInfo(const void* p) override { return memory_.pointerInfo(p); }

  // As cudaMemcpyAsync with pageable host memory: a copy from it takes the
  // bytes at the call (CUDA stages them), so the caller may reuse them at
  // once; a copy into it returns only once done.
  Status copy(void* dst, const void* src, size_t bytes, Stream stream) override {
    if (bytes == 0) return Status::success();
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    // The copy engine's accesses are dmaCopy's: a copy may read words peers keep storing (the
    // one-shot's acks) or write a flag a kernel polls, as on a real GPU.
    if (memory_.pointerInfo(dst).kind == MemoryKind::kHost) {
      s->enqueue([=] { dmaCopy(dst, src, bytes); });
      s->synchronize();
    } else if (memory_.pointerInfo(src).kind == MemoryKind::kHost) {
      auto staged = std::make_shared<std::vector<unsigned char>>(
          static_cast<const unsigned char*>(src), static_cast<const unsigned char*>(src) + bytes);
      s->enqueue([=] { dmaCopy(dst, staged->data(), bytes); });
    } else {
      s->enqueue([=] { dmaCopy(dst, src, bytes); });
    }
    return Status::success();
  }

  Status fill(void* dst, int value, size_t bytes, Stream stream) override {
    if (bytes == 0) return Status::success();
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    s->enqueue([=] { memset(dst, value, bytes); });
    return Status::success();
  }

  Result<IpcHandle> ipcHandle(void* p) override { return memory_.ipcHandle(p); }
  Result<void*> ipcOpen(const IpcHandle& h) override { return memory_.ipcOpen(h); }
  Status ipcClose(void* p) override { return memory_.ipcClose(p); }

  Result<Stream> streamCreate() override {
    auto stream = std::make_unique<EmulatedStream>(tlsDevice);
    Stream handle = stream.get();
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.emplace(handle, std::move(stream));
    return handle;
  }

  Status streamDestroy(Stream stream) override {
    std::unique_ptr<EmulatedStream> doomed;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = streams_.find(stream);
      if (it == streams_.end())
        return invalidArgument("emulated GPU: destroy of an unknown stream");
      doomed = std::move(it->second);
      streams_.erase(it);
    }
    return Status::success();  // the destructor runs what is queued first, as CUDA does
  }

  Status streamSynchronize(Stream stream) override {
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    s->synchronize();
    return Status::success();
  }

  Result<bool> streamCapturing(Stream stream) override {
    BRAID_TRY(streamOf(stream).status());
    return false;
  }

  Result<Event> eventCreate() override {
    auto event = std::make_shared<EmulatedEvent>();
    Event handle = event.get();
    std::lock_guard<std::mutex> lock(mutex_);
    events_.emplace(handle, std::move(event));
    return handle;
  }

  Status eventDestroy(Event event) override {
    std::lock_guard<std::mutex> lock(mutex_);
    // Tasks still queued keep their own reference.
    if (events_.erase(event) == 0)
      return invalidArgument("emulated GPU: destroy of an unknown event");
    return Status::success();
  }

  Status eventRecord(Event event, Stream stream) override {
    BRAID_ASSIGN_OR_RETURN(std::shared_ptr<EmulatedEvent> e, eventOf(event));
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    const uint64_t n = e->addRecord();
    s->enqueue([e, n] { e->complete(n); });
    return Status::success();
  }

  Status streamWaitEvent(Stream stream, Event event) override {
    BRAID_ASSIGN_OR_RETURN(std::shared_ptr<EmulatedEvent> e, eventOf(event));
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    const uint64_t n = e->latest();
    if (n > 0) s->enqueue([e, n] { e->waitFor(n); });
    return Status::success();
  }

  Status eventSynchronize(Event event) override {
    BRAID_ASSIGN_OR_RETURN(std::shared_ptr<EmulatedEvent> e, eventOf(event));
    e->waitFor(e->latest());
    return Status::success();
  }

  Result<bool> eventDone(Event event) override {
    BRAID_ASSIGN_OR_RETURN(std::shared_ptr<EmulatedEvent> e, eventOf(event));
    return e->done(e->latest());
  }

  Status hostCallback(Stream stream, void (*fn)(void*), void* arg) override {
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    s->enqueue([fn, arg] { fn(arg); });
    return Status::success();
  }

  Status launch(const Launch& l, Stream stream) override {
    if (l.hostFunction == nullptr) {
      return invalidUsage("emulated GPU: the kernel has no CPU instance to run");
    }
    if (l.blocks == 0) return invalidArgument("emulated GPU: a launch needs at least one block");
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    // The parameter is copied at the call, as cudaLaunchKernel copies it.
    auto args = std::make_shared<std::vector<unsigned char>>(
        static_cast<const unsigned char*>(l.args),
        static_cast<const unsigned char*>(l.args) + l.argBytes);
    auto fn = l.hostFunction;
    const unsigned blocks = l.blocks;
    const unsigned threads = threadsPerBlock_;
    s->enqueue([s, args, fn, blocks, threads] {
      s->runBlocks(blocks, threads, [&](unsigned b, const kernels::engine::ThreadTeam& team) {
        fn(args->data(), b, blocks, team);
      });
    });
    return Status::success();
  }

  Status deviceSynchronize() override {
    std::vector<EmulatedStream*> mine;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto& [handle, s] : streams_) {
        if (s->device() == tlsDevice) mine.push_back(s.get());
      }
      auto it = defaultStreams_.find(tlsDevice);
      if (it != defaultStreams_.end()) mine.push_back(it->second.get());
    }
    for (EmulatedStream* s : mine) s->synchronize();
    return Status::success();
  }

 private:
  Status checkDevice(int device) const {
    if (device < 0 || device >= devices_) {
      return invalidArgument("emulated GPU: device " + std::to_string(device) + " is outside [0, " +
                             std::to_string(devices_) + ")");
    }
    return Status::success();
  }

  Result<EmulatedStream*> streamOf(Stream stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stream == nullptr) {
      auto& s = defaultStreams_[tlsDevice];
      if (!s) s = std::make_unique<EmulatedStream>(tlsDevice);
      return s.get();
    }
    auto it = streams_.find(stream);
    if (it == streams_.end()) return invalidArgument("emulated GPU: unknown stream");
    return it->second.get();
  }

  Result<std::shared_ptr<EmulatedEvent>> eventOf(Event event) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = events_.find(event);
    if (it == events_.end()) return invalidArgument("emulated GPU: unknown event");
    return it->second;
  }

  const int devices_;
  const unsigned threadsPerBlock_;
  EmulatedMemory memory_;
  std::mutex mutex_;
  std::map<Stream, std::unique_ptr<EmulatedStream>> streams_;
  std::map<int, std::unique_ptr<EmulatedStream>> defaultStreams_;
  std::map<Event, std::shared_ptr<EmulatedEvent>> events_;
};

}  // namespace

std::unique_ptr<Runtime> makeEmulatedRuntime(int devices, int threadsPerBlock) {
  return std::make_unique<EmulatedRuntime>(devices, threadsPerBlock);
}

}  // namespace braid::gpu
