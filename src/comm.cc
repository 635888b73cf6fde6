// Communicator creation and the collectives of braid::Comm.
#include <unistd.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>

#include "algo/ring.h"
#include "base/log.h"
#include "base/test_fault.h"
#include "bootstrap/unique_id.h"
#include "comm_impl.h"
#include "flight/dump_on_signal.h"
#include "kernels/engine/sync.h"
#include "kernels/host_reduce.h"
#include "topology/host_id.h"
#include "transport/shm/shm_fifo.h"

namespace braid {
namespace {

uint64_t randomNonce() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

Status exchangePeerInfo(Comm::Impl& c) {
  c.peers.assign(c.nranks, PeerInfo{});
  PeerInfo& me = c.peers[c.rank];
  me.rank = c.rank;
  me.pid = getpid();
  me.hostId = topology::hostId(c.config.hostIdOverride);
  me.nonce = randomNonce();
  me.cudaDevice = c.cudaDevice;
  me.numaId = c.numaIdOfThisRank();
  BRAID_TRY(c.bootstrap->allGather(c.peers.data(), sizeof(PeerInfo)));
  for (int r = 0; r < c.nranks; ++r) {
    if (c.peers[r].rank != r) {
      return internalError("bootstrap returned a garbled peer table at rank " + std::to_string(r));
    }
    if ((c.peers[r].cudaDevice >= 0) != (me.cudaDevice >= 0)) {
      const int onGpu = me.cudaDevice >= 0 ? c.rank : r;
      const int onHost = me.cudaDevice >= 0 ? r : c.rank;
      return invalidUsage("rank " + std::to_string(onGpu) + " runs on a GPU but rank " +
                          std::to_string(onHost) +
                          " on host memory: all ranks of a communicator must do the same (set "
                          "BRAID_HOST_COMM=1 everywhere for host memory, or give every rank a "
                          "device)");
    }
  }
  bool spansHosts = false;
  for (int r = 0; r < c.nranks; ++r) spansHosts = spansHosts || c.onOtherHost(r);
  if (!spansHosts) return Status::success();
  return c.connectNetwork();
}

}  // namespace

int Comm::currentDevice() {
  gpu::Runtime& rt = gpu::runtime();
  if (rt.deviceCount() == 0) return -1;
  Result<int> d = rt.currentDevice();
  return d.ok() ? d.value() : -1;
}

Result<UniqueId> Comm::newUniqueId() {
  Config config = Config::fromEnvironment();
  return bootstrap::createUniqueId(config.timeoutMs);
}

Comm::Comm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Comm::~Comm() {
  if (impl_ && impl_->flight) flight::forget(impl_->flight.get());
  // Said first, so that the neighbours take this rank's going for a departure, not a death.
  if (impl_ && impl_->watch) impl_->watch->leave();
  if (impl_ && impl_->trace) {
    Status s = impl_->trace->write();
    if (s.ok()) {
      BRAID_INFO("trace written to %s", impl_->trace->path().c_str());
    } else {
      BRAID_WARN("%s", s.message().c_str());
    }
  }
  // Receiving ends whose sender never came still have a name in /dev/shm.
  if (impl_) {
    for (const auto& name : impl_->madeSegments) (void)transport::shm::unlinkSegment(name);
  }
}

int Comm::rank() const { return impl_->rank; }
int Comm::size() const { return impl_->nranks; }
int Comm::cudaDevice() const { return impl_->cudaDevice; }

std::pair<int, int> Comm::hostBlock() const {
  const std::vector<PeerInfo>& peers = impl_->peers;
  const uint64_t host = peers[impl_->rank].hostId;
  int first = impl_->rank;
  int last = impl_->rank;
  while (first > 0 && peers[first - 1].hostId == host) --first;
  while (last + 1 < impl_->nranks && peers[last + 1].hostId == host) ++last;
  return {first, last - first + 1};
}

namespace {

// The device a new communicator runs on, or -1 for host memory: the one
// the options name, else the caller's current one, as NCCL takes it; host
// memory when there is no usable device or it is asked for.
Result<int> chooseDevice(const CommOptions& options, const Config& config) {
  gpu::Runtime& rt = gpu::runtime();
  if (options.hostMemory || config.hostComm || rt.deviceCount() == 0) return -1;
  if (options.device >= 0) {
    BRAID_TRY(rt.setDevice(options.device).withContext("the communicator's device"));
    return options.device;
  }
  return rt.currentDevice();
}

// What a new communicator does once its watch runs: the steps whose failure a lost peer explains.
Status finishCreate(Comm::Impl& impl) {
  BRAID_TRY(impl.startFlightRecorder());
  BRAID_TRY(impl.loadTopology().withContext("topology"));
  BRAID_TRY(exchangePeerInfo(impl));
  BRAID_TRY(impl.planTopology().withContext("topology"));
  return impl.connectRing().withContext("connecting the ring");
}

}  // namespace

Result<std::unique_ptr<Comm>> Comm::create(const UniqueId& id, int nranks, int rank,
                                           const CommOptions& options) {
  if (nranks <= 0) return invalidArgument("nranks must be positive, got " + std::to_string(nranks));
  if (rank < 0 || rank >= nranks) {
    return invalidArgument("rank " + std::to_string(rank) + " is outside [0, " +
                           std::to_string(nranks) + ")");
  }
  log::ScopedLogRank logRank(rank);
  auto impl = std::make_unique<Impl>();
  impl->config = Config::fromEnvironment();
  BRAID_TRY(impl->config.validate());
  BRAID_ASSIGN_OR_RETURN(impl->allowed, tune::parseAllowed(impl->config.algo, impl->config.proto));
  impl->model = tune::Model::calibratedDefaults();
  impl->deterministic = impl->config.deterministic;
  if (!impl->config.tracePath.empty()) {
    impl->trace = std::make_unique<trace::Recorder>(impl->config.tracePath, rank);
  }
  impl->rank = rank;
  impl->nranks = nranks;
  if (options.stop) impl->stop = options.stop;
  BRAID_ASSIGN_OR_RETURN(impl->cudaDevice, chooseDevice(options, impl->config));
  if (rank == 0) BRAID_INFO("%s", impl->config.describe().c_str());
  BRAID_INFO("init: rank %d of %d, id %s", rank, nranks, bootstrap::describeUniqueId(id).c_str());

  BRAID_ASSIGN_OR_RETURN(
      impl->bootstrap,
      bootstrap::Bootstrap::create(id, rank, nranks, impl->config.timeoutMs, impl->stop.get()));
  test_fault::reached("bootstrap.joined");
  BRAID_TRY(impl->startWatch().withContext("watching the peers"));
  test_fault::reached("watch.started");
  // From here on the watch sees a peer that dies: a step that fails because of it says so.
  BRAID_TRY(impl->explainFailure(finishCreate(*impl)));
  return std::unique_ptr<Comm>(new Comm(std::move(impl)));
}

transport::WaitContext Comm::Impl::waitContext() const {
  transport::WaitContext w;
  w.deadline = Deadline::afterMs(config.timeoutMs);
  w.abort = stop.get();
  w.spinNs = spinNs;
  return w;
}

Status Comm::finalize() {
  Impl& c = *impl_;
  ActiveCall active(c.activeCalls);
  log::ScopedLogRank logRank(c.rank);
  if (c.finalized) return invalidUsage("communicator was already finalized");
  if (c.revoked.load()) return invalidUsage("communicator was revoked: it cannot be finalized");
  c.finalized = true;
  if (c.aborted.load()) return Status::success();
  // Host calls completed before they returned; a GPU communicator's
  // kernels must finish first. Then the peers must be done with this
  // rank's FIFOs too.
  Status s = Status::success();
  if (c.gpu) {
    s = c.flushGpu();
    if (s.ok()) s = c.waitForGpu();
    if (s.ok()) s = c.gpuFault();
  }
  if (s.ok()) s = c.bootstrap->barrier();
  return c.explainFailure(s).withContext("finalize");
}

Status Comm::asyncError() const {
  if (std::optional<watch::Loss> loss = impl_->watch ? impl_->watch->firstLoss() : std::nullopt) {
    return impl_->lossStatus(*loss);
  }
  if (impl_->broken) return *impl_->broken;
  if (!impl_->gpu) return Status::success();
  const Status fault = impl_->gpuFault();
  // A kernel that gave up is heard of here first: its story is worth a dump, once.
  if (!fault.ok() && !impl_->faultDumped.exchange(true)) impl_->noteFailure(fault, "a kernel");
  return fault;
}

Status Comm::revoke() {
  Impl& c = *impl_;
  log::ScopedLogRank logRank(c.rank);
  if (c.finalized) return invalidUsage("communicator was finalized: it cannot be revoked");
  if (c.aborted.load()) return invalidUsage("communicator was aborted");
  if (c.revoked.exchange(true)) return invalidUsage("communicator was revoked already");
  BRAID_INFO("revoke: stopping what runs on the communicator");
  return c.quiesce(/*keepStopped=*/false, /*ownCalls=*/0).withContext("revoke");
}

void Comm::abort() {
  impl_->aborted.store(true);
  impl_->stop->store(true);
  {
    std::lock_guard<std::mutex> lock(impl_->childrenMutex);
    for (const auto& child : impl_->childStops) child->store(true);
  }
  // Kernels waiting for a peer poll this word and give up.
  if (impl_->gpu) kernels::engine::storePublish(impl_->gpu->abortWord, 1);
  if (impl_->bootstrap) impl_->bootstrap->abort();
  // A call blocked in a wait sees the flag within one sleep slice (10 ms);
  // only once it has left may the communicator's memory go away.
  while (impl_->activeCalls.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace braid
