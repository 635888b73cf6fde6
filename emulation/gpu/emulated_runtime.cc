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
// Graph capture is modelled as CUDA's rules have it: a captured stream records
// its work (launches, copies, fills, callbacks) instead of running it, until
// endCapture makes a graph that graphLaunch runs on any stream, as often as
// asked; a call that may allocate or synchronize (potentially unsafe, in
// CUDA's words) fails while the thread's capture mode forbids it, and
// invalidates the capture it broke, so that endCapture fails too; a stream
// being captured may not be synchronized, take pageable memory or wait for an
// event recorded outside the capture, except through an external event node
// (eventRecordExternal, streamWaitEventExternal), which every replay makes as it
// is launched.
// What it leaves out: the legacy default stream's implicit synchronization
// with other streams (braid never relies on it), capture on the default
// stream, graphs that fork across streams, and any notion of speed.
#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/dma_copy.h"
#include "emulation/gpu/emulated_memory.h"
#include "emulation/gpu/emulated_stream.h"
#include "gpu/runtime.h"
#include "gpu/visible_devices.h"

namespace braid::gpu {
namespace {

/// What the bytes of a kernel's parameter that a launch does not pass hold here (Launch).
constexpr unsigned char kUnpassedParamByte = 0xa5;

thread_local int tlsDevice = 0;
/// This thread's capture mode (cudaThreadExchangeStreamCaptureMode); global by default, as CUDA's.
thread_local CaptureMode tlsCaptureMode = CaptureMode::kGlobal;

/// One node of a capture: work, or an event record or wait that every replay makes as it is
/// launched (eventRecordExternal, streamWaitEventExternal), against the event's records then.
struct CapturedNode {
  enum class Kind { kTask, kRecordEvent, kWaitEvent };
  Kind kind = Kind::kTask;
  EmulatedStream::Task task;
  std::shared_ptr<EmulatedEvent> event;
};

/// What a captured stream has recorded so far.
struct Capture {
  CaptureMode mode = CaptureMode::kGlobal;
  std::thread::id owner;  ///< the thread that began it
  std::vector<CapturedNode> nodes;
  std::set<EmulatedEvent*> recorded;  ///< events recorded within the capture
  std::string invalidatedBy;          ///< the forbidden call that broke it; empty while whole
};

/// An instantiated graph: the nodes of one capture, in order.
struct EmulatedGraph {
  std::vector<CapturedNode> nodes;
};

class EmulatedRuntime final : public Runtime {
 public:
  explicit EmulatedRuntime(const EmulatedShape& shape)
      : physical_(visibleOf(shape)),
        devices_(static_cast<int>(physical_.size())),
        machineDevices_(shape.devices),
        noPeerAccess_(shape.noPeerAccess.begin(), shape.noPeerAccess.end()),
        corruptPeerWrites_(shape.corruptPeerWrites.begin(), shape.corruptPeerWrites.end()),
        threadsPerBlock_(static_cast<unsigned>(shape.threadsPerBlock)),
        multiprocessors_(shape.multiprocessors),
        blocksPerSm_(shape.blocksPerSm),
        dmabuf_(shape.dmabuf) {}

  ~EmulatedRuntime() override {
    // Streams finish their queued work before memory goes away.
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.clear();
    defaultStreams_.clear();
  }

  std::string describe() const override {
    return "emulated (" + std::to_string(devices_) + " GPU" + (devices_ == 1 ? "" : "s") +
           (devices_ == machineDevices_ ? std::string()
                                        : " visible of " + std::to_string(machineDevices_)) +
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
    // The machine's device behind this process's number: its name, bus ID and UUID are the
    // same in every process, whatever number CUDA_VISIBLE_DEVICES gives it there.
    const int physical = physical_[device];
    DeviceInfo info;
    info.name = "emulated GPU " + std::to_string(physical);
    char bus[32];
    snprintf(bus, sizeof(bus), "0000:%02x:00.0", 0xe0 + physical % 32);
    info.pciBusId = bus;
    info.uuid = emulatedUuid(physical);
    info.multiprocessors = multiprocessors_;
    info.computeMajor = 9;
    info.computeMinor = 0;
    info.memoryBytes = uint64_t{1} << 30;
    return info;
  }

  Result<bool> canAccessPeer(int device, int peer) override {
    BRAID_TRY(checkDevice(device));
    BRAID_TRY(checkDevice(peer));
    // All emulated devices share the host's memory, unless told to lack peer access.
    return noPeerAccess_.count({physical_[device], physical_[peer]}) == 0;
  }

  Status enablePeerAccess(int peer) override { return checkDevice(peer); }

  Result<void*> deviceAlloc(size_t bytes) override {
    BRAID_TRY(checkUnsafe("cudaMalloc"));
    return memory_.deviceAlloc(bytes, tlsDevice);
  }
  Status deviceFree(void* p) override {
    BRAID_TRY(checkUnsafe("cudaFree"));
    return memory_.deviceFree(p);
  }
  Result<void*> hostAlloc(size_t bytes) override {
    BRAID_TRY(checkUnsafe("cudaHostAlloc"));
    return memory_.hostAlloc(bytes);
  }
  Status hostFree(void* p) override {
    BRAID_TRY(checkUnsafe("cudaFreeHost"));
    return memory_.hostFree(p);
  }
  Status hostRegister(void* p, size_t bytes) override {
    BRAID_TRY(checkUnsafe("cudaHostRegister"));
    return memory_.hostRegister(p, bytes);
  }
  Status hostUnregister(void* p) override {
    BRAID_TRY(checkUnsafe("cudaHostUnregister"));
    return memory_.hostUnregister(p);
  }
  Result<PointerInfo> pointerInfo(const void* p) override { return memory_.pointerInfo(p); }

  // As cudaMemcpyAsync with pageable host memory: a copy from it takes the
  // bytes at the call (CUDA stages them), so the caller may reuse them at
  // once; a copy into it returns only once done.
  Status copy(void* dst, const void* src, size_t bytes, Stream stream) override {
    if (bytes == 0) return Status::success();
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    // The copy engine's accesses are dmaCopy's: a copy may read words peers keep storing (the
    // one-shot's acks) or write a flag a kernel polls, as on a real GPU.
    const bool toPageable = memory_.pointerInfo(dst).kind == MemoryKind::kHost;
    const bool fromPageable = memory_.pointerInfo(src).kind == MemoryKind::kHost;
    if ((toPageable || fromPageable) && capturing(s)) {
      return forbidInCapture(s, "cudaMemcpyAsync with pageable host memory");
    }
    if (toPageable) {
      BRAID_TRY(checkUnsafe("cudaMemcpyAsync into pageable host memory (it synchronizes)"));
      s->enqueue([=](EmulatedStream&) { dmaCopy(dst, src, bytes); });
      s->synchronize();
    } else if (fromPageable) {
      auto staged = std::make_shared<std::vector<unsigned char>>(
          static_cast<const unsigned char*>(src), static_cast<const unsigned char*>(src) + bytes);
      s->enqueue([=](EmulatedStream&) { dmaCopy(dst, staged->data(), bytes); });
    } else {
      const bool spoiled = spoilsWrite(s->device(), dst);
      submit(s, [=](EmulatedStream&) {
        dmaCopy(dst, src, bytes);
        if (spoiled) spoilAsBrokenPeerTraffic(dst, bytes);
      });
    }
    return Status::success();
  }

  /// Whether a copy on `device`'s stream into `dst` crosses a pair told to corrupt its writes
  /// (the memory's device as this process numbers it, as cudaPointerGetAttributes gives it).
  bool spoilsWrite(int device, const void* dst) {
    if (corruptPeerWrites_.empty()) return false;
    const PointerInfo target = memory_.pointerInfo(dst);
    if (target.kind != MemoryKind::kDevice || target.device == device) return false;
    if (target.device < 0 || target.device >= devices_) return false;
    return corruptPeerWrites_.count({physical_[device], physical_[target.device]}) != 0;
  }

  /// Garbles what a copy wrote, as a broken peer-to-peer path does: some bytes flipped.
  static void spoilAsBrokenPeerTraffic(void* dst, size_t bytes) {
    auto* p = static_cast<unsigned char*>(dst);
    for (size_t i = 7; i < bytes; i += 61) p[i] ^= 0xa5;
  }

  Status fill(void* dst, int value, size_t bytes, Stream stream) override {
    if (bytes == 0) return Status::success();
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    submit(s, [=](EmulatedStream&) { memset(dst, value, bytes); });
    return Status::success();
  }

  Result<IpcHandle> ipcHandle(void* p) override { return memory_.ipcHandle(p); }
  bool dmabufSupported(int device) override { return dmabuf_ && device >= 0 && device < devices_; }
  Result<int> exportDmabuf(void* p, size_t bytes) override {
    if (!dmabuf_) {
      return Status(ErrorCode::kCudaError,
                    "cuMemGetHandleForAddressRange failed: the emulated GPU models a driver "
                    "without dmabuf (BRAID_EMULATE_GPU_NO_DMABUF)");
    }
    return memory_.exportDmabuf(p, bytes);
  }
  bool vmmSupported(int device) override { return device >= 0 && device < devices_; }
  Result<void*> vmmAlloc(size_t bytes) override {
    BRAID_TRY(checkUnsafe("cuMemCreate"));
    return memory_.vmmAlloc(bytes, tlsDevice, physical_[tlsDevice]);
  }
  Status vmmFree(void* base) override {
    BRAID_TRY(checkUnsafe("cuMemRelease"));
    return memory_.vmmFree(base);
  }
  Result<VmmRange> vmmRange(const void* p, size_t bytes) override {
    return memory_.vmmRange(p, bytes);
  }
  Result<int> vmmExport(void* base) override { return memory_.vmmExport(base); }
  Result<void*> vmmImport(int fd, size_t bytes) override {
    BRAID_TRY(checkUnsafe("cuMemMap"));
    return memory_.vmmImport(fd, bytes, physical_);
  }
  Status vmmUnmap(void* mapped) override {
    BRAID_TRY(checkUnsafe("cuMemUnmap"));
    return memory_.vmmUnmap(mapped);
  }
  Result<void*> ipcOpen(const IpcHandle& h) override {
    BRAID_TRY(checkUnsafe("cudaIpcOpenMemHandle"));
    return memory_.ipcOpen(h);
  }
  Status ipcClose(void* p) override {
    BRAID_TRY(checkUnsafe("cudaIpcCloseMemHandle"));
    return memory_.ipcClose(p);
  }

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
    if (capturing(s)) return forbidInCapture(s, "cudaStreamSynchronize of the captured stream");
    BRAID_TRY(checkUnsafe("cudaStreamSynchronize"));
    s->synchronize();
    return Status::success();
  }

  Result<bool> streamCapturing(Stream stream) override {
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    return capturing(s);
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
    {
      // Recorded within a capture, the event only orders the capture's own work, which is one
      // sequence here: the record is noted, and waits on it within the capture are allowed.
      std::lock_guard<std::mutex> lock(mutex_);
      auto c = captures_.find(s);
      if (c != captures_.end()) {
        c->second.recorded.insert(e.get());
        return Status::success();
      }
    }
    const uint64_t n = e->addRecord();
    s->enqueue([e, n](EmulatedStream&) { e->complete(n); });
    return Status::success();
  }

  Status streamWaitEvent(Stream stream, Event event) override {
    BRAID_ASSIGN_OR_RETURN(std::shared_ptr<EmulatedEvent> e, eventOf(event));
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    bool captured = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto c = captures_.find(s);
      captured = c != captures_.end();
      if (captured && c->second.recorded.count(e.get()) != 0) return Status::success();
    }
    if (captured) {
      return forbidInCapture(s,
                             "cudaStreamWaitEvent on an event recorded outside the capture "
                             "(cudaErrorStreamCaptureIsolation)");
    }
    const uint64_t n = e->latest();
    if (n > 0) s->enqueue([e, n](EmulatedStream&) { e->waitFor(n); });
    return Status::success();
  }

  Status eventRecordExternal(Event event, Stream stream) override {
    return captureEventNode(CapturedNode::Kind::kRecordEvent, event, stream);
  }

  Status streamWaitEventExternal(Stream stream, Event event) override {
    return captureEventNode(CapturedNode::Kind::kWaitEvent, event, stream);
  }

  Status eventSynchronize(Event event) override {
    BRAID_TRY(checkUnsafe("cudaEventSynchronize"));
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
    submit(s, [fn, arg](EmulatedStream&) { fn(arg); });
    return Status::success();
  }

  Status launch(const Launch& l, Stream stream) override {
    if (l.hostFunction == nullptr) {
      return invalidUsage("emulated GPU: the kernel has no CPU instance to run");
    }
    if (l.blocks == 0) return invalidArgument("emulated GPU: a launch needs at least one block");
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    if (l.argBytes > l.paramBytes) {
      return invalidArgument("emulated GPU: a launch passes " + std::to_string(l.argBytes) +
                             " bytes to a parameter of " + std::to_string(l.paramBytes));
    }
    // The parameter is copied at the call, as cuLaunchKernel copies it; the bytes not passed
    // are undefined on a GPU, and garbage here, so that a kernel reading them goes wrong.
    auto args = std::make_shared<std::vector<unsigned char>>(l.paramBytes, kUnpassedParamByte);
    std::memcpy(args->data(), l.args, l.argBytes);
    auto fn = l.hostFunction;
    const unsigned blocks = l.blocks;
    const unsigned threads = threadsPerBlock_;
    submit(s, [args, fn, blocks, threads](EmulatedStream& on) {
      on.runBlocks(blocks, threads, [&](unsigned b, const kernels::engine::ThreadTeam& team) {
        fn(args->data(), b, blocks, team);
      });
    });
    return Status::success();
  }

  // Every block of an emulated launch is a thread team of its own and all run at once, so
  // nothing stops when more spin than fit; the shape's figure is what a GPU would hold, and
  // braid keeps within it (comm/gpu_channels.h) as on one.
  Result<int> residentBlocksPerSm(const Launch& kernel) override {
    if (kernel.threadsPerBlock == 0) {
      return invalidArgument("emulated GPU: an occupancy query needs the block's threads");
    }
    return blocksPerSm_;
  }

  Status deviceSynchronize() override {
    BRAID_TRY(checkUnsafe("cudaDeviceSynchronize"));
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
  Status beginCapture(Stream stream, CaptureMode mode) override {
    if (stream == nullptr) {
      return invalidUsage("emulated GPU: the legacy default stream cannot be captured");
    }
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    std::lock_guard<std::mutex> lock(mutex_);
    if (captures_.count(s) != 0) {
      return invalidUsage("emulated GPU: the stream is being captured already");
    }
    Capture& c = captures_[s];
    c.mode = mode;
    c.owner = std::this_thread::get_id();
    return Status::success();
  }

  Result<Graph> endCapture(Stream stream) override {
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    std::lock_guard<std::mutex> lock(mutex_);
    auto c = captures_.find(s);
    if (c == captures_.end()) return invalidUsage("emulated GPU: the stream is not being captured");
    Capture capture = std::move(c->second);
    captures_.erase(c);
    if (!capture.invalidatedBy.empty()) {
      return Status(ErrorCode::kCudaError, "emulated GPU: the capture was invalidated by " +
                                               capture.invalidatedBy +
                                               " (cudaErrorStreamCaptureInvalidated)");
    }
    auto graph = std::make_unique<EmulatedGraph>();
    graph->nodes = std::move(capture.nodes);
    Graph handle = graph.get();
    graphs_.emplace(handle, std::move(graph));
    return handle;
  }

  Status graphLaunch(Graph graph, Stream stream) override {
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    std::vector<CapturedNode> nodes;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto g = graphs_.find(graph);
      if (g == graphs_.end()) return invalidArgument("emulated GPU: unknown graph");
      nodes = g->second->nodes;
    }
    // The replay's event records and waits take their places among the event's records now, as
    // it is launched, as CUDA's external event nodes do.
    for (CapturedNode& node : nodes) {
      const std::shared_ptr<EmulatedEvent> e = node.event;
      if (node.kind == CapturedNode::Kind::kRecordEvent) {
        const uint64_t n = e->addRecord();
        submit(s, [e, n](EmulatedStream&) { e->complete(n); });
      } else if (node.kind == CapturedNode::Kind::kWaitEvent) {
        const uint64_t n = e->latest();
        if (n > 0) submit(s, [e, n](EmulatedStream&) { e->waitFor(n); });
      } else {
        submit(s, std::move(node.task));
      }
    }
    return Status::success();
  }

  Status graphDestroy(Graph graph) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (graphs_.erase(graph) == 0) return invalidArgument("emulated GPU: unknown graph");
    return Status::success();
  }

  CaptureMode exchangeCaptureMode(CaptureMode mode) override {
    const CaptureMode previous = tlsCaptureMode;
    tlsCaptureMode = mode;
    return previous;
  }

 private:
  /// An external event node in the capture of `stream`; outside a capture, the plain record or
  /// wait.
  Status captureEventNode(CapturedNode::Kind kind, Event event, Stream stream) {
    BRAID_ASSIGN_OR_RETURN(std::shared_ptr<EmulatedEvent> e, eventOf(event));
    BRAID_ASSIGN_OR_RETURN(EmulatedStream * s, streamOf(stream));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto c = captures_.find(s);
      if (c != captures_.end()) {
        c->second.nodes.push_back({kind, nullptr, std::move(e)});
        return Status::success();
      }
    }
    return kind == CapturedNode::Kind::kRecordEvent ? eventRecord(event, stream)
                                                    : streamWaitEvent(stream, event);
  }

  bool capturing(EmulatedStream* s) {
    std::lock_guard<std::mutex> lock(mutex_);
    return captures_.count(s) != 0;
  }

  /// Runs `task` on `s`, or records it if `s` is being captured.
  void submit(EmulatedStream* s, EmulatedStream::Task task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto c = captures_.find(s);
      if (c != captures_.end()) {
        c->second.nodes.push_back({CapturedNode::Kind::kTask, std::move(task), nullptr});
        return;
      }
    }
    s->enqueue(std::move(task));
  }

  /// A potentially unsafe call (`call`): refused, and the captures it would break invalidated,
  /// when this thread's capture mode forbids it: in kGlobal mode while this thread captures a
  /// stream (not in relaxed mode) or any other thread captures one in kGlobal mode; in
  /// kThreadLocal mode only while this thread captures one; in kRelaxed mode never.
  Status checkUnsafe(const char* call) {
    if (tlsCaptureMode == CaptureMode::kRelaxed) return Status::success();
    const std::thread::id me = std::this_thread::get_id();
    bool forbidden = false;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [stream, c] : captures_) {
      const bool mine = c.owner == me && c.mode != CaptureMode::kRelaxed;
      const bool othersGlobal =
          c.owner != me && c.mode == CaptureMode::kGlobal && tlsCaptureMode == CaptureMode::kGlobal;
      if (!mine && !othersGlobal) continue;
      forbidden = true;
      if (c.invalidatedBy.empty()) c.invalidatedBy = call;
    }
    if (!forbidden) return Status::success();
    return Status(ErrorCode::kCudaError,
                  std::string("emulated GPU: ") + call +
                      " is not permitted while a stream is being captured "
                      "(cudaErrorStreamCaptureUnsupported); make the call before the capture, or "
                      "in relaxed capture mode (cudaThreadExchangeStreamCaptureMode)");
  }

  /// A call that no capture of `s` allows: refused, and the capture invalidated.
  Status forbidInCapture(EmulatedStream* s, const std::string& call) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto c = captures_.find(s);
      if (c != captures_.end() && c->second.invalidatedBy.empty()) c->second.invalidatedBy = call;
    }
    return Status(ErrorCode::kCudaError, "emulated GPU: " + call +
                                             " is not permitted on a stream being captured "
                                             "(cudaErrorStreamCaptureUnsupported)");
  }

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

  /// The machine's devices this process sees, by its own numbering.
  static std::vector<int> visibleOf(const EmulatedShape& shape) {
    if (!shape.visible.empty()) return shape.visible;
    std::vector<int> all(shape.devices);
    for (int d = 0; d < shape.devices; ++d) all[d] = d;
    return all;
  }

  const std::vector<int> physical_;
  const int devices_;
  const int machineDevices_;
  const std::set<std::pair<int, int>> noPeerAccess_;  ///< (a, b): a cannot reach b's memory
  /// (a, b): what a's copies write into b's memory arrives corrupt (EmulatedShape).
  const std::set<std::pair<int, int>> corruptPeerWrites_;
  const unsigned threadsPerBlock_;
  const int multiprocessors_;
  const int blocksPerSm_;
  const bool dmabuf_;
  EmulatedMemory memory_;
  std::mutex mutex_;
  std::map<Stream, std::unique_ptr<EmulatedStream>> streams_;
  std::map<int, std::unique_ptr<EmulatedStream>> defaultStreams_;
  std::map<Event, std::shared_ptr<EmulatedEvent>> events_;
  std::map<EmulatedStream*, Capture> captures_;
  std::map<Graph, std::unique_ptr<EmulatedGraph>> graphs_;
};

}  // namespace

std::unique_ptr<Runtime> makeEmulatedRuntime(const EmulatedShape& shape) {
  return std::make_unique<EmulatedRuntime>(shape);
}

}  // namespace braid::gpu
