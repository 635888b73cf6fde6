// A communicator that loses a peer (watch/peer_watch.h) and one that is told to stop: the
// watcher's word raises the stop flag that every wait of every call watches, calls return
// ncclRemoteError naming the lost rank, and revoke() or shrink() can then stop what still runs
// and wait for it (quiesce).
#include <chrono>
#include <thread>

#include "base/log.h"
#include "comm_impl.h"
#include "kernels/engine/sync.h"

namespace braid {
namespace {

/// How long a call that failed on its own waits for the word of a loss before it words its
/// error: the socket of a dead rank may close under a transport a moment before the watcher
/// reads its own, and the word from the far side of the ring takes a few milliseconds.
constexpr int64_t kLossGraceMs = 500;

}  // namespace

Status Comm::Impl::startWatch() {
  watch::WatchOptions options;
  options.magic = bootstrap->magic();
  options.proof = bootstrap->proof(0);  // the purpose is the watcher's to set
  options.heartbeatTimeoutMs = config.heartbeatTimeoutMs;
  options.setupTimeoutMs = config.timeoutMs;
  options.cancel = stop.get();
  BRAID_ASSIGN_OR_RETURN(
      watch, watch::PeerWatch::start(*bootstrap, options,
                                     [this](const watch::Loss& loss) { onPeerLost(loss); }));
  return Status::success();
}

void Comm::Impl::onPeerLost(const watch::Loss& loss) {
  stop->store(true);
  // A kernel waiting for the dead rank polls this word and gives up (kernels/engine/
  // device_waits.h); the fault it records then reads as the loss (gpuFault).
  if (uint32_t* word = gpuAbortWord.load()) kernels::engine::storePublish(word, 1);
  // What every channel waited for when the word came: the moment worth keeping.
  if (flight && !config.flightRecorderDir.empty()) {
    Result<std::string> path = flight->dump("lost rank " + std::to_string(loss.rank), lossWords());
    if (!path.ok()) BRAID_WARN("flight recorder: %s", path.status().message().c_str());
  }
}

Status Comm::Impl::lossStatus(const watch::Loss& loss) const {
  std::string who = "rank " + std::to_string(loss.rank);
  if (loss.rank == rank) {
    who = "this rank (" + std::to_string(rank) + ") was given up by its peers";
  } else if (loss.rank < static_cast<int>(peers.size()) && peers[loss.rank].pid != 0) {
    // The pid is known once the peers exchanged their details; a rank lost before has none.
    who += " (pid " + std::to_string(peers[loss.rank].pid) + ")";
  }
  return remoteError(who + " is lost: " + loss.describe() +
                     "; the communicator cannot be used again (ncclCommShrink can make one "
                     "without it)");
}

Status Comm::Impl::explainFailure(const Status& s) const {
  if (s.ok()) return s;
  std::optional<watch::Loss> loss;
  if (watch) {
    loss = watch->firstLoss();
    // A peer's death reaches a transport as a remote error (a greeting or a read that met
    // end of file) or a system one (a reset connection, a refused connect).
    const bool peerShaped =
        s.code() == ErrorCode::kRemoteError || s.code() == ErrorCode::kSystemError;
    if (!loss && peerShaped && !aborted.load()) {
      loss = watch->awaitLoss(kLossGraceMs);
    }
  }
  if (!loss) return s;
  return remoteError(lossStatus(*loss).message() + "; the call stopped: " + s.message());
}

Status Comm::Impl::quiesce(bool keepStopped, int ownCalls) {
  stop->store(true);
  if (gpu) kernels::engine::storePublish(gpu->abortWord, 1);
  // Calls blocked in a wait see the flag within one sleep slice.
  while (activeCalls.load() > ownCalls) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (gpu) {
    gpu->pending = {};  // never launched: nothing of it ran
    BRAID_TRY(waitForGpu().withContext("waiting for the communicator's kernels to stop"));
  }
  const bool lost = watch && watch->firstLoss();
  if (keepStopped || lost) return Status::success();
  // Quiet now: lower the flags, so that the bootstrap serves split() again, and forget what the
  // stopped calls recorded: a revoked communicator reports success once it is quiet, as NCCL's.
  stop->store(false);
  if (gpu) {
    kernels::engine::storeRelaxed(gpu->abortWord, 0);
    kernels::engine::storeRelaxed(&gpu->fault->code, 0);
    kernels::engine::storeRelaxed(&gpu->fault->claim, 0);
  }
  broken.reset();
  return Status::success();
}

}  // namespace braid
