// A GPU communicator's life: its state at creation, what its kernels tell
// the host (faults), waiting for them, abort, and buffer registration.
//
// The communicator keeps two words in pinned host memory that its kernels
// address: the abort word, which abort() raises and every waiting kernel
// polls (so a kernel waiting for a dead peer ends), and the fault record,
// where the first block that gives up says why. asyncError() reads the
// record without waiting for any kernel, as ncclCommGetAsyncError does.
#include <cinttypes>
#include <cstring>
#include <string>

#include "base/log.h"
#include "comm_impl.h"
#include "kernels/engine/interpreter.h"
#include "kernels/engine_launch.h"

namespace braid {
namespace {

namespace engine = kernels::engine;

// Cursors for every GPU FIFO end a communicator makes: rings and trees per
// channel and point-to-point peers stay far below this.
constexpr size_t kCursorCapacity = 8192;

}  // namespace

transport::cuda_ipc::FifoPlacement GpuState::placementFor(int peerDevice) const {
  Result<bool> reach = runtime->canAccessPeer(device, peerDevice);
  return reach.ok() && reach.value() ? transport::cuda_ipc::FifoPlacement::kDeviceMemory
                                     : transport::cuda_ipc::FifoPlacement::kPinnedHost;
}

GpuState::~GpuState() {
  if (runtime == nullptr) return;
  (void)runtime->setDevice(device);
  if (launchedAny) (void)runtime->eventSynchronize(lastLaunch);
  // Peers may still read this rank's last one-shot call from its board.
  if (oneShot && !oneShot->waitForReaders(timeoutMs, abortWord) &&
      engine::loadAcquire(abortWord) == 0) {
    BRAID_WARN(
        "destroy: a peer did not read this rank's last one-shot all-reduce in time; "
        "freeing its board anyway");
  }
  oneShot.reset();
  // FIFOs and programs first: their memory is what the kernels used.
  recvLinks.clear();
  sendLinks.clear();
  p2pPrograms.clear();
  selfCopy.reset();
  retired.clear();
  for (void* p : retiredScratch) (void)runtime->deviceFree(p);
  if (scratch != nullptr) (void)runtime->deviceFree(scratch);
  if (cursors != nullptr) (void)runtime->deviceFree(cursors);
  if (fault != nullptr) (void)runtime->hostFree(fault);
  if (waits != nullptr) (void)runtime->hostFree(waits);
  if (abortWord != nullptr) (void)runtime->hostFree(abortWord);
  if (lastLaunch != nullptr) (void)runtime->eventDestroy(lastLaunch);
  if (stream != nullptr) (void)runtime->streamDestroy(stream);
}

Status Comm::Impl::createGpu(int device) {
  auto g = std::make_unique<GpuState>();
  gpu::Runtime& rt = gpu::runtime();
  g->runtime = &rt;
  g->device = device;
  BRAID_TRY(rt.setDevice(device));
  BRAID_ASSIGN_OR_RETURN(g->stream, rt.streamCreate());
  BRAID_ASSIGN_OR_RETURN(g->lastLaunch, rt.eventCreate());
  BRAID_ASSIGN_OR_RETURN(void* word, rt.hostAlloc(sizeof(uint32_t)));
  g->abortWord = static_cast<uint32_t*>(word);
  // From here the watcher raises the word itself; a loss heard of before has raised the flag.
  gpuAbortWord.store(g->abortWord);
  if (stop->load()) engine::storePublish(g->abortWord, 1);
  BRAID_ASSIGN_OR_RETURN(void* record, rt.hostAlloc(sizeof(engine::FaultRecord)));
  g->fault = static_cast<engine::FaultRecord*>(record);
  BRAID_ASSIGN_OR_RETURN(void* waits,
                         rt.hostAlloc(engine::kMaxWaitRecords * sizeof(engine::WaitRecord)));
  memset(waits, 0, engine::kMaxWaitRecords * sizeof(engine::WaitRecord));
  g->waits = static_cast<engine::WaitRecord*>(waits);
  g->cursorCapacity = kCursorCapacity;
  BRAID_ASSIGN_OR_RETURN(void* cursors,
                         rt.deviceAlloc(kCursorCapacity * sizeof(engine::FifoCursor)));
  g->cursors = static_cast<engine::FifoCursor*>(cursors);
  BRAID_TRY(rt.fill(cursors, 0, kCursorCapacity * sizeof(engine::FifoCursor), g->stream));
  BRAID_TRY(rt.streamSynchronize(g->stream));
  BRAID_ASSIGN_OR_RETURN(const gpu::DeviceInfo info, rt.deviceInfo(device));
  BRAID_INFO("gpu: rank %d on device %d (%s, %s) with %s; engine of %u threads per channel", rank,
             device, info.name.c_str(), info.pciBusId.c_str(), rt.describe().c_str(),
             kernels::engineThreadsPerBlock());
  if (flight) flight->attachGpuWaits(g->waits);
  gpu = std::move(g);
  return Status::success();
}

transport::cuda_ipc::FifoPlacement Comm::Impl::placementFor(int peer) const {
  if (!config.transportAllowed("cuda_ipc")) return transport::cuda_ipc::FifoPlacement::kPinnedHost;
  return gpu->placementFor(peers[peer].cudaDevice);
}

Status Comm::Impl::gpuFault() const {
  const engine::FaultRecord& f = *gpu->fault;
  const auto code = static_cast<engine::FaultCode>(engine::loadAcquire(&f.code));
  if (code == engine::FaultCode::kNone) return Status::success();
  const std::string where = "a kernel of rank " + std::to_string(rank) + " (block " +
                            std::to_string(f.block) + ", call " + std::to_string(f.call) +
                            " of its launch)";
  const std::string peer = f.peer >= 0 ? "rank " + std::to_string(f.peer) : "its peer";
  switch (code) {
    case engine::FaultCode::kAborted:
      return remoteError(where + " stopped waiting for " + peer +
                         ": the communicator was aborted, or another channel of the launch "
                         "gave up");
    case engine::FaultCode::kTimedOut:
      return remoteError(where + " timed out after " + std::to_string(f.got / 1000000) +
                         " ms waiting for " + peer + " (BRAID_TIMEOUT_MS=" +
                         std::to_string(config.timeoutMs) + "); is it running the same calls?");
    case engine::FaultCode::kSliceMismatch:
      return invalidUsage(
          where + " received a slice of " + std::to_string(f.got & ~engine::kLastSlice) + " bytes" +
          ((f.got & engine::kLastSlice) ? " (a message's last)" : "") + " from " + peer +
          " where it expected " + std::to_string(f.expected & ~engine::kLastSlice) +
          ((f.expected & engine::kLastSlice) ? " (a message's last)" : "") +
          ": do all ranks call the same collective with the same count, and "
          "do sends and receives match in size?");
    case engine::FaultCode::kNoPort:
      return internalError(where + " met an instruction for a port its channel lacks");
    case engine::FaultCode::kBadCall:
      return internalError(where + " was launched with a call of another datatype or operator");
    case engine::FaultCode::kEnvError:
    case engine::FaultCode::kNone:
      break;
  }
  return internalError(where + " stopped with fault " +
                       std::to_string(static_cast<unsigned>(code)));
}

Status Comm::Impl::waitForGpu() {
  if (!gpu->launchedAny) return Status::success();
  BRAID_TRY(gpu->runtime->setDevice(gpu->device));
  return gpu->runtime->eventSynchronize(gpu->lastLaunch);
}

bool Comm::onGpu() const { return impl_->gpu != nullptr; }

void Comm::beginFusedLaunch() {
  if (impl_->gpu) impl_->gpu->fusing = true;
}

Status Comm::endFusedLaunch() {
  if (!impl_->gpu) return Status::success();
  impl_->gpu->fusing = false;
  log::ScopedLogRank logRank(impl_->rank);
  Status s = impl_->flushGpu();
  if (!s.ok()) impl_->gpu->pending = {};
  return s;
}

Result<void*> Comm::registerBuffer(void* buffer, size_t bytes) {
  Impl& c = *impl_;
  if (buffer == nullptr) return invalidArgument("buffer is NULL");
  if (bytes == 0) return invalidArgument("size is 0");
  auto [it, fresh] = c.registrations.emplace(buffer, bytes);
  if (!fresh) return invalidUsage("buffer is registered with this communicator already");
  if (c.gpu) {
    BRAID_INFO(
        "register: %zu bytes at %p on device %d: tracked; braid's kernels copy through "
        "their FIFOs, no zero-copy path uses registrations yet",
        bytes, buffer, c.gpu->device);
  } else {
    BRAID_INFO(
        "register: %zu bytes at %p on a host communicator: tracked; host FIFOs copy "
        "through shared memory, no zero-copy path uses registrations",
        bytes, buffer);
  }
  return it->first;
}

Status Comm::deregisterBuffer(void* handle) {
  Impl& c = *impl_;
  if (handle == nullptr) return invalidArgument("handle is NULL");
  if (c.registrations.erase(handle) == 0) {
    return invalidArgument("handle is not a live registration of this communicator");
  }
  return Status::success();
}

}  // namespace braid
