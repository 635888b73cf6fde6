// braid::Comm's own methods: creation, destruction, who it is, and its life's end (finalize,
// abort, revoke, the asynchronous error); the calls are in collectives.cc, collectives_v.cc
// and p2p.cc, splitting and shrinking in split.cc and shrink.cc.
#include <chrono>
#include <string>
#include <thread>

#include "base/log.h"
#include "base/test_fault.h"
#include "bootstrap/unique_id.h"
#include "comm/comm_impl.h"
#include "ignored_variables.h"

namespace braid {

using comm::ActiveCall;

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
// ~Impl then stops SIGUSR1's dumps and the watcher (whose goodbye lets the neighbours take this
// rank's going for a departure, not a death) before any part goes.
Comm::~Comm() {
  if (!impl_) return;
  // The GPU side waits for its kernels on its device as it goes.
  const gpu::DeviceGuard keep = impl_->keepCallersDevice();
  impl_->recorder.writeTrace();
  impl_.reset();
}

int Comm::rank() const { return impl_->members.rank; }
int Comm::size() const { return impl_->members.nranks; }
int Comm::cudaDevice() const { return impl_->members.cudaDevice; }
std::pair<int, int> Comm::hostBlock() const { return impl_->members.hostBlock(); }
bool Comm::onGpu() const { return impl_->gpu != nullptr; }

namespace {

// The device a new communicator runs on, or -1 for host memory: the one
// the options name, else the caller's current one, as NCCL takes it; host
// memory when there is no usable device or it is asked for.
Result<int> chooseDevice(const CommOptions& options, const Config& config) {
  if (options.hostMemory || config.hostComm) return -1;
  gpu::Runtime& rt = gpu::runtime();
  // A process that cannot use the GPU at all (forked after its parent used it) must not get a
  // host communicator in place of the GPU one it asked for.
  BRAID_TRY(rt.usable().withContext("the communicator's device"));
  if (rt.deviceCount() == 0) return -1;
  if (options.device >= 0) {
    BRAID_TRY(rt.setDevice(options.device).withContext("the communicator's device"));
    return options.device;
  }
  return rt.currentDevice();
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
  Config settings = Config::fromEnvironment();
  // A device the options name is set while the communicator is made, and the caller's current
  // one set back after (ncclCommInitAll, a split's child).
  const bool named = options.device >= 0 && !options.hostMemory && !settings.hostComm;
  const gpu::DeviceGuard keep(named ? &gpu::runtime() : nullptr, options.device);
  if (options.minChannels > 0) settings.minChannels = options.minChannels;
  if (options.maxChannels > 0) settings.maxChannels = options.maxChannels;
  BRAID_TRY(settings.validate());
  BRAID_ASSIGN_OR_RETURN(const int device, chooseDevice(options, settings));
  auto impl = std::make_unique<Impl>(std::move(settings), rank, nranks, options.name, device);
  const Config& config = impl->config;
  comm::SelectorSettings& choosing = impl->choosing;
  BRAID_ASSIGN_OR_RETURN(choosing.allowed, tune::parseAllowed(config.algo, config.proto));
  choosing.model = tune::Model::calibratedDefaults();
  choosing.deterministic = config.deterministic;
  choosing.algoForced = !config.algo.empty();
  choosing.nranks = nranks;
  if (options.stop) impl->health.shareStop(options.stop);
  if (rank == 0) BRAID_INFO("%s", config.describe().c_str());
  noteIgnoredVariables();
  BRAID_INFO("init: rank %d of %d, id %s%s%s%s", rank, nranks,
             bootstrap::describeUniqueId(id).c_str(), options.name.empty() ? "" : ", name \"",
             options.name.c_str(), options.name.empty() ? "" : "\"");

  std::vector<UniqueId> ids{id};
  ids.insert(ids.end(), options.moreIds.begin(), options.moreIds.end());
  BRAID_TRY(impl->members.joinBootstrap(ids, config.timeoutMs, impl->health.stopFlag()));
  test_fault::reached("bootstrap.joined");
  Impl* raw = impl.get();
  BRAID_TRY(
      impl->health.startWatch(config, [raw](const watch::Loss& loss) { raw->onPeerLost(loss); })
          .withContext("watching the peers"));
  test_fault::reached("watch.started");
  // From here on the watch sees a peer that dies: a step that fails because of it says so.
  BRAID_TRY(impl->health.explainFailure(impl->finishCreate()));
  return std::unique_ptr<Comm>(new Comm(std::move(impl)));
}

Status Comm::Impl::finishCreate() {
  BRAID_TRY(recorder.startFlight());
  BRAID_TRY(members.loadTopology(config).withContext("topology"));
  BRAID_TRY(members.exchangePeers(config));
  recorder.startProfiler();  // before the network, whose proxies report to it
  network.reportProxyEvents(recorder.proxyEvents());
  if (members.spansHosts()) BRAID_TRY(network.connect(choosing.allowed));
  BRAID_TRY(members.planTopology(config).withContext("topology"));
  return connect().withContext("connecting the ring");
}

void Comm::Impl::onPeerLost(const watch::Loss& loss) {
  // A kernel waiting for the dead rank gives up too; the fault it records then reads as the
  // loss (GpuSide::faultStatus, explained by Health).
  health.raiseStop();
  // What every channel waited for when the word came: the moment worth keeping.
  recorder.noteLoss(loss);
}

Status Comm::Impl::quiesce(bool keepStopped, int ownCalls) {
  health.raiseStop();
  // Calls blocked in a wait see the flag within one sleep slice.
  while (health.runningCalls() > ownCalls) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (gpu) {
    gpu->dropPending();  // never launched: nothing of it ran
    BRAID_TRY(gpu->waitForLaunches().withContext("waiting for the communicator's kernels to stop"));
  }
  const bool lost = health.firstLoss().has_value();
  if (keepStopped || lost) return Status::success();
  // Quiet now: lower the flags, so that the bootstrap serves split() again, and forget what the
  // stopped calls recorded: a revoked communicator reports success once it is quiet, as NCCL's.
  health.lowerStop();
  if (gpu) gpu->resume();
  health.clearBroken();
  return Status::success();
}

Status Comm::finalize() {
  Impl& c = *impl_;
  const gpu::DeviceGuard keep = c.keepCallersDevice();
  comm::Health& health = c.health;
  ActiveCall active = health.countCall();
  log::ScopedLogRank logRank(c.members.rank);
  if (health.finalized()) return invalidUsage("communicator was already finalized");
  if (health.revoked()) return invalidUsage("communicator was revoked: it cannot be finalized");
  health.markFinalized();
  if (health.aborted()) return Status::success();
  // Host calls completed before they returned; a GPU communicator's
  // kernels must finish first. Then the peers must be done with this
  // rank's FIFOs too.
  Status s = Status::success();
  if (c.gpu) {
    s = c.gpu->flush();
    if (s.ok()) s = c.gpu->waitForLaunches();
    if (s.ok()) s = c.gpu->faultStatus();
  }
  if (s.ok()) s = c.members.bootstrap()->barrier();
  return health.explainFailure(s).withContext("finalize");
}

Status Comm::asyncError() const {
  const Impl& c = *impl_;
  if (std::optional<watch::Loss> loss = c.health.firstLoss()) return c.health.lossStatus(*loss);
  if (c.health.broken()) return *c.health.broken();
  if (!c.gpu) return Status::success();
  const Status fault = c.health.explainFault(c.gpu->faultStatus());
  // A kernel that gave up is heard of here first: its story is worth a dump, once.
  if (!fault.ok() && c.recorder.firstFaultDump()) {
    c.recorder.noteFailure(fault, "a kernel");
  }
  return fault;
}

Status Comm::revoke() {
  Impl& c = *impl_;
  log::ScopedLogRank logRank(c.members.rank);
  if (c.health.finalized()) return invalidUsage("communicator was finalized: it cannot be revoked");
  if (c.health.aborted()) return invalidUsage("communicator was aborted");
  if (!c.health.markRevoked()) return invalidUsage("communicator was revoked already");
  BRAID_INFO("revoke: stopping what runs on the communicator");
  return c.quiesce(/*keepStopped=*/false, /*ownCalls=*/0).withContext("revoke");
}

void Comm::abort() {
  Impl& c = *impl_;
  const gpu::DeviceGuard keep = c.keepCallersDevice();
  c.health.markAborted();
  // Every wait, and every kernel waiting for a peer (it polls the GPU's abort word), gives up.
  c.health.raiseStop();
  c.health.stopChildren();
  if (c.members.bootstrap()) c.members.bootstrap()->abort();
  // A call blocked in a wait sees the flag within one sleep slice (10 ms);
  // only once it has left may the communicator's memory go away.
  while (c.health.runningCalls() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

profiler::CommProfiler* Comm::profilerPlugin() const { return impl_->recorder.profiler(); }

void Comm::beginFusedLaunch() {
  if (profiler::CommProfiler* p = impl_->recorder.profiler()) p->openGroup();
  if (impl_->gpu) impl_->gpu->beginFusing();
}

Status Comm::endFusedLaunch() {
  Status launched = Status::success();
  if (impl_->gpu) {
    log::ScopedLogRank logRank(impl_->members.rank);
    const gpu::DeviceGuard keep = impl_->keepCallersDevice();
    launched = impl_->gpu->endFusing();
  }
  // The group's event ends once its calls are launched, as NCCL's.
  if (profiler::CommProfiler* p = impl_->recorder.profiler()) p->closeGroup();
  return launched;
}

}  // namespace braid
