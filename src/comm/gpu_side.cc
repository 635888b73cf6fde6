// GpuSide (gpu_side.h): a GPU communicator's life: its state at creation, what its kernels tell
// the host (faults), waiting for them, and abort.
//
// The communicator keeps two words in pinned host memory that its kernels
// address: the abort word, which abort() raises and every waiting kernel
// polls (so a kernel waiting for a dead peer ends), and the fault record,
// where the first block that gives up says why. asyncError() reads the
// record without waiting for any kernel, as ncclCommGetAsyncError does.
#include "comm/gpu_side.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <string>
#include <utility>

#include "base/log.h"
#include "comm/gpu_peer_probe.h"
#include "kernels/engine/interpreter.h"
#include "kernels/engine_launch.h"
#include "topology/pci_bus_id.h"

namespace braid::comm {
namespace {

namespace engine = kernels::engine;

// Cursors for every GPU FIFO end a communicator makes: rings and trees per
// channel and point-to-point peers stay far below this.
constexpr size_t kCursorCapacity = 8192;

}  // namespace

Status GpuSide::checkBuffer(const void* buffer, const char* name) const {
  return bufferCheck_.check(*runtime_, buffer, name);
}

GpuSide::~GpuSide() {
  if (runtime_ == nullptr) return;
  (void)runtime_->setDevice(device_);
  // The last launch, eager or a replay of a captured one.
  if (launchedAny_ || capturedAny_) (void)runtime_->eventSynchronize(lastLaunch_);
  // Peers' stores of this rank's last one-shot calls may still be landing in its board.
  if (oneShot_ && !oneShot_->waitForWriters(static_cast<uint64_t>(config_.timeoutMs), abortWord_) &&
      engine::loadAcquire(abortWord_) == 0) {
    BRAID_WARN(
        "destroy: a peer did not finish storing its last one-shot all-reduce into this rank's "
        "board in time; freeing the board anyway");
  }
  // FIFOs and programs first: their memory is what the kernels used.
  (void)releaseMemory();
  if (cursors_ != nullptr) (void)runtime_->deviceFree(cursors_);
  if (fault_ != nullptr) (void)runtime_->hostFree(fault_);
  if (waits_ != nullptr) (void)runtime_->hostFree(waits_);
  // The watcher's thread must not raise a word that is gone.
  health_.forgetGpuAbortWord(abortWord_);
  if (abortWord_ != nullptr) (void)runtime_->hostFree(abortWord_);
  if (lastLaunch_ != nullptr) (void)runtime_->eventDestroy(lastLaunch_);
  if (stream_ != nullptr) (void)runtime_->streamDestroy(stream_);
}

Status GpuSide::open(int onDevice, gpu::MeteredRuntime& metered) {
  // Everything this side allocates goes through the meter, which counts the device memory the
  // communicator holds (ncclCommMemStats).
  meter_ = &metered;
  gpu::Runtime& rt = metered;
  runtime_ = &rt;
  device_ = onDevice;
  BRAID_TRY(rt.setDevice(device_));
  BRAID_ASSIGN_OR_RETURN(stream_, rt.streamCreate());
  BRAID_ASSIGN_OR_RETURN(lastLaunch_, rt.eventCreate());
  BRAID_ASSIGN_OR_RETURN(void* word, rt.hostAlloc(sizeof(uint32_t)));
  abortWord_ = static_cast<uint32_t*>(word);
  // From here the watcher raises the word itself; a loss heard of before has raised the flag.
  health_.setGpuAbortWord(abortWord_);
  if (health_.stopped()) engine::storePublish(abortWord_, 1);
  BRAID_ASSIGN_OR_RETURN(void* record, rt.hostAlloc(sizeof(engine::FaultRecord)));
  fault_ = static_cast<engine::FaultRecord*>(record);
  BRAID_ASSIGN_OR_RETURN(void* waitRecords,
                         rt.hostAlloc(engine::kMaxWaitRecords * sizeof(engine::WaitRecord)));
  memset(waitRecords, 0, engine::kMaxWaitRecords * sizeof(engine::WaitRecord));
  waits_ = static_cast<engine::WaitRecord*>(waitRecords);
  cursorCapacity_ = kCursorCapacity;
  BRAID_ASSIGN_OR_RETURN(void* cursorWords,
                         rt.deviceAlloc(kCursorCapacity * sizeof(engine::FifoCursor)));
  cursors_ = static_cast<engine::FifoCursor*>(cursorWords);
  BRAID_TRY(rt.fill(cursorWords, 0, kCursorCapacity * sizeof(engine::FifoCursor), stream_));
  BRAID_TRY(rt.streamSynchronize(stream_));
  BRAID_TRY(notePeerReach());
  BRAID_TRY(checkPeerWrites(rt, members_, stream_, peerReaches_));
  BRAID_ASSIGN_OR_RETURN(const gpu::DeviceInfo info, rt.deviceInfo(device_));
  BRAID_INFO("gpu: rank %d on device %d (%s, %s) with %s; engine of %u threads per channel",
             members_.rank, device_, info.name.c_str(), info.pciBusId.c_str(),
             rt.describe().c_str(), kernels::engineThreadsPerBlock());
  recorder_.attachGpuWaits(waits_);
  return Status::success();
}

Status GpuSide::notePeerReach() {
  peerReaches_.assign(members_.nranks, true);
  // The bus IDs of the GPUs this process sees, by number, asked for only once a rank of this
  // host is on another GPU.
  std::vector<std::string> visibleBusIds;
  for (int peer = 0; peer < members_.nranks; ++peer) {
    // A rank on another host reaches this GPU through the network proxy, not peer access; one
    // on this GPU, through its own memory.
    if (!members_.onOtherGpuOfHost(peer, members_.rank)) continue;
    for (int d = static_cast<int>(visibleBusIds.size()); d < runtime_->deviceCount(); ++d) {
      BRAID_ASSIGN_OR_RETURN(const gpu::DeviceInfo seen, runtime_->deviceInfo(d));
      BRAID_ASSIGN_OR_RETURN(std::string bus, topology::normalizePciBusId(seen.pciBusId));
      visibleBusIds.push_back(std::move(bus));
    }
    // The peer's GPU by its bus ID among the ones this process sees (its device number is its
    // own process's). One this process does not see (each rank of the job given one GPU) cannot
    // be asked about here, and is taken as reachable, as the GPUs of one node usually are.
    const char* busId = members_.peers()[peer].gpuBusId;
    const auto seen = std::find(visibleBusIds.begin(), visibleBusIds.end(), busId);
    if (seen == visibleBusIds.end()) continue;
    // The peer's GPU writes into this one's memory (the FIFOs it sends on), and reads from it
    // (the one-shot boards): asked in that direction.
    const int local = static_cast<int>(seen - visibleBusIds.begin());
    Result<bool> reach = runtime_->canAccessPeer(local, device_);
    peerReaches_[peer] = reach.ok() && reach.value();
    if (!peerReaches_[peer]) {
      BRAID_INFO(
          "gpu: the GPU of rank %d (%s) cannot reach this GPU's memory (no peer access): its "
          "FIFOs to rank %d are in pinned host memory",
          peer, busId, members_.rank);
    }
  }
  return Status::success();
}

transport::cuda_ipc::FifoPlacement GpuSide::placementFor(int peer) const {
  if (!config_.transportAllowed("cuda_ipc")) return transport::cuda_ipc::FifoPlacement::kPinnedHost;
  return peerReaches_[peer] ? transport::cuda_ipc::FifoPlacement::kDeviceMemory
                            : transport::cuda_ipc::FifoPlacement::kPinnedHost;
}

Status GpuSide::faultStatus() const {
  const engine::FaultRecord& f = *fault_;
  const auto code = static_cast<engine::FaultCode>(engine::loadAcquire(&f.code));
  if (code == engine::FaultCode::kNone) return Status::success();
  const std::string where = "a kernel of rank " + std::to_string(members_.rank) + " (block " +
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
                         std::to_string(config_.timeoutMs) + "); is it running the same calls?");
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

Status GpuSide::waitForLaunches() {
  // The replays of captured launches record lastLaunch_ as eager launches do.
  if (!launchedAny_ && !capturedAny_) return Status::success();
  BRAID_TRY(runtime_->setDevice(device_));
  return runtime_->eventSynchronize(lastLaunch_);
}

void GpuSide::resume() {
  engine::storeRelaxed(abortWord_, 0);
  engine::storeRelaxed(&fault_->code, 0);
  engine::storeRelaxed(&fault_->claim, 0);
}

transport::cuda_ipc::FifoPlacement GpuSide::sharedPlacement() const {
  auto placement = transport::cuda_ipc::FifoPlacement::kDeviceMemory;
  for (int peer = 0; peer < members_.nranks; ++peer) {
    if (peer != members_.rank && placementFor(peer) != placement) {
      placement = transport::cuda_ipc::FifoPlacement::kPinnedHost;
    }
  }
  return placement;
}

Result<exec::DeviceSymmetric*> GpuSide::symmetric() {
  if (!symmetric_) {
    gpu::RelaxedCapture relaxed(*runtime_);  // the caller's stream may be captured
    bootstrap::Bootstrap* bootstrap = members_.bootstrap();
    BRAID_ASSIGN_OR_RETURN(symmetric_, exec::DeviceSymmetric::create(
                                           *runtime_, links_.linkNonce() ^ 0x73796d6b62617273ull,
                                           members_.rank, members_.nranks, sharedPlacement(),
                                           [bootstrap] { return bootstrap->barrier(); }, stream_));
  }
  return symmetric_.get();
}

Result<size_t> GpuSide::makeOneShot(const tune::Allowed& allowed) {
  const int rank = members_.rank;
  const int nranks = members_.nranks;
  const int oneShotAlgo = static_cast<int>(algo::Algorithm::kOneShot);
  if (allowed.algorithm[oneShotAlgo] && nranks > 1) {
    // Every peer reads the board: it lies where each could place a FIFO.
    const transport::cuda_ipc::FifoPlacement placement = sharedPlacement();
    bootstrap::Bootstrap* bootstrap = members_.bootstrap();
    BRAID_ASSIGN_OR_RETURN(oneShot_,
                           exec::DeviceOneShot::create(
                               *runtime_, links_.linkNonce() ^ 0x6770756f6e657368ull, rank, nranks,
                               exec::DeviceOneShot::kDefaultMaxBytes, placement,
                               [bootstrap] { return bootstrap->barrier(); }, stream_));
    return oneShot_->maxBytes();
  }
  return size_t{0};
}

Status GpuSide::releaseMemory() {
  Status first = runtime_->setDevice(device_);
  memoryReleased_ = true;
  oneShot_.reset();
  symmetric_.reset();
  recvLinks_.clear();
  sendLinks_.clear();
  p2pPrograms_.clear();
  selfCopy_.reset();
  retired_.clear();
  // Every buffer is freed even after one fails; the first failure is the answer.
  auto keep = [&first](Status s) {
    if (first.ok()) first = std::move(s);
  };
  for (void* p : retiredScratch_) keep(runtime_->deviceFree(p));
  retiredScratch_.clear();
  if (scratch_ != nullptr) keep(runtime_->deviceFree(scratch_));
  scratch_ = nullptr;
  scratchBytes_ = 0;
  return first;
}

Result<void*> GpuSide::scratchFor(size_t bytes) {
  if (scratchBytes_ >= bytes) return scratch_;
  if (scratch_ != nullptr) retiredScratch_.push_back(scratch_);
  scratch_ = nullptr;
  scratchBytes_ = 0;
  gpu::RelaxedCapture relaxed(*runtime_);  // the caller's stream may be captured
  BRAID_ASSIGN_OR_RETURN(scratch_, runtime_->deviceAlloc(bytes));
  scratchBytes_ = bytes;
  return scratch_;
}

Status GpuSide::restoreMemory(Selector& selector) {
  if (!memoryReleased_) return Status::success();
  BRAID_TRY(runtime_->setDevice(device_));
  // The FIFOs made from here on start afresh, their cursors too.
  cursorsUsed_ = 0;
  BRAID_TRY(runtime_->fill(cursors_, 0, cursorCapacity_ * sizeof(engine::FifoCursor), stream_));
  BRAID_TRY(runtime_->streamSynchronize(stream_));
  BRAID_ASSIGN_OR_RETURN(const size_t oneShotMaxBytes, makeOneShot(selector.settings().allowed));
  if (oneShotMaxBytes > 0) selector.enableOneShot(oneShotMaxBytes);
  memoryReleased_ = false;
  return Status::success();
}

// A GPU communicator: its FIFOs are GPU FIFOs made on first use
// (gpu_links.cc), with no shm ring; it runs the ring and the tree on
// the Simple and LL protocols and the one-shot all-reduce on its GPU
// boards (exec/device_one_shot.h), chosen by the GPU model
// (tune::Model::gpuDefaults).
Status GpuSide::connect(SelectorSettings& settings) {
  const int nranks = members_.nranks;
  settings.model = tune::Model::gpuDefaults();
  tune::Allowed& allowed = settings.allowed;
  const int oneShotAlgo = static_cast<int>(algo::Algorithm::kOneShot);
  allowed.oneShotMaxBytes = 0;
  if (nranks > static_cast<int>(kernels::engine::kMaxOneShotRanks)) {
    allowed.algorithm[oneShotAlgo] = false;
  }
  BRAID_ASSIGN_OR_RETURN(const size_t oneShotMaxBytes, makeOneShot(allowed));
  if (oneShotMaxBytes > 0) {
    allowed.oneShotMaxBytes = oneShotMaxBytes;
    settings.oneShotBoard = true;
  }
  BRAID_INFO(
      "selection: %s (GPU)%s", tune::describeAllowed(allowed).c_str(),
      settings.deterministic ? "; deterministic reductions in the in-order tree's order" : "");
  return Status::success();
}

}  // namespace braid::comm
