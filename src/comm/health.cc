// Health (health.h): a communicator that loses a peer (watch/peer_watch.h) and one that is told
// to stop. The watcher's word raises the stop flag that every wait of every call watches, and
// calls return ncclRemoteError naming the lost rank; revoke() or shrink() can then stop what
// still runs and wait for it (Comm::Impl::quiesce).
#include "comm/health.h"

#include "base/log.h"
#include "kernels/engine/sync.h"

namespace braid::comm {
namespace {

/// How long a call that failed on its own waits for the word of a loss before it words its
/// error: the socket of a dead rank may close under a transport a moment before the watcher
/// reads its own, and the word from the far side of the ring takes a few milliseconds.
constexpr int64_t kLossGraceMs = 500;
/// How long a failed link waits for the word of a death before it calls itself a link failure:
/// a dead rank's links break too, and then its death is the news (the watcher sees a closed
/// connection within milliseconds). Below kLossGraceMs, so that a call that failed with the link
/// still finds the link's word while it waits for a loss.
constexpr int64_t kLinkGraceMs = 200;

}  // namespace

Health::~Health() {
  {
    std::lock_guard<std::mutex> lock(linkMutex_);
    watchStopping_ = true;
  }
  if (linkThread_.joinable()) linkThread_.join();
}

Status Health::startWatch(const Config& config, std::function<void(const watch::Loss&)> onLost) {
  watch::WatchOptions options;
  options.magic = members_.bootstrap()->magic();
  options.proof = members_.bootstrap()->proof(0);  // the purpose is the watcher's to set
  options.heartbeatTimeoutMs = config.heartbeatTimeoutMs;
  options.setupTimeoutMs = config.timeoutMs;
  options.cancel = stop_.get();
  BRAID_ASSIGN_OR_RETURN(
      watch_, watch::PeerWatch::start(*members_.bootstrap(), options, std::move(onLost)));
  return Status::success();
}

void Health::stopWatching() {
  {
    // A link that breaks from now on breaks because this communicator goes away; one being
    // handled still uses the watcher, which must outlive it.
    std::unique_lock<std::mutex> lock(linkMutex_);
    watchStopping_ = true;
    linkHandled_.wait(lock, [this] { return !linkInFlight_; });
  }
  if (linkThread_.joinable()) linkThread_.join();
  if (!watch_) return;
  // Aborted: the peers' calls cannot finish without this rank, so they are to hear its going
  // as a loss, not a departure. (A rank whose call failed on its own and that then destroys
  // its communicator still leaves in order: its peers most often failed the same way, and a
  // word of loss would hide their own reasons, which the flight recorder keeps.)
  watch_->leave(/*abandoning=*/aborted_.load());
  watch_.reset();
}

Status Health::postLetter(int peer, uint64_t key, const void* payload, size_t bytes,
                          const Deadline& deadline) {
  if (!watch_) return internalError("no watcher to send a letter through");
  return watch_->post(peer, key, payload, bytes, deadline);
}

Result<std::vector<char>> Health::collectLetter(uint64_t key, const Deadline& deadline) {
  if (!watch_) return internalError("no watcher to receive a letter through");
  return watch_->collect(key, deadline);
}

void Health::raiseStop() {
  stop_->store(true);
  // A kernel waiting for a peer polls this word and gives up (kernels/engine/device_waits.h).
  if (uint32_t* word = gpuAbortWord_.load()) kernels::engine::storePublish(word, 1);
}

void Health::stopChildren() {
  std::lock_guard<std::mutex> lock(childrenMutex_);
  for (const auto& child : childStops_) child->store(true);
}

void Health::noteLinkFailure(int peer, const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(linkMutex_);
    if (linkNoted_ || watchStopping_) return;
    linkNoted_ = true;
    linkInFlight_ = true;
    // Its words first: a call that the stop ends may word its error before the grace is over.
    linkWords_ = LinkFailure{peer, why};
    // Made under the lock, so that stopWatching, which waits for linkInFlight_ under it, sees
    // the thread to join.
    linkThread_ = std::thread([this, peer, why] {
      judgeLinkFailure(peer, why);
      {
        std::lock_guard<std::mutex> done(linkMutex_);
        linkInFlight_ = false;
      }
      linkHandled_.notify_all();
    });
  }
  raiseStop();  // every wait of this rank ends now, whatever the cause turns out to be
}

void Health::judgeLinkFailure(int peer, const std::string& why) {
  if (watch_) {
    // A link failure passed on by another rank (most often the same link's other end) is no
    // better news than this one, whose words say more here: only a death is.
    std::optional<watch::Loss> death = watch_->awaitLoss(kLinkGraceMs);
    if (death && death->cause != watch::wire::Cause::kLinkFailed) {
      BRAID_INFO("the link to rank %d failed (%s) after rank %d was lost: the loss is the news",
                 peer, why.c_str(), death->rank);
      return;
    }
  }
  {
    std::lock_guard<std::mutex> lock(linkMutex_);
    linkFailure_ = LinkFailure{peer, why};
    linkFailed_.store(true, std::memory_order_release);
  }
  if (watch_) watch_->reportLinkFailure(peer);
  // Logged after the word is on its way: stderr may block (peer_watch.cc's learn, likewise).
  BRAID_WARN("the link to rank %d failed: %s; every call of this communicator stops", peer,
             why.c_str());
}

std::optional<Health::LinkFailure> Health::linkFailure() const {
  // Every call asks, and nearly always the answer is no: without the lock.
  if (!linkFailed_.load(std::memory_order_acquire)) return std::nullopt;
  std::lock_guard<std::mutex> lock(linkMutex_);
  return linkFailure_;
}

std::optional<Health::LinkFailure> Health::linkWords() const {
  std::lock_guard<std::mutex> lock(linkMutex_);
  return linkWords_;
}

std::optional<watch::Loss> Health::firstLoss() const {
  if (watch_) {
    if (std::optional<watch::Loss> loss = watch_->firstLoss()) return loss;
  }
  // A link failure this rank saw is known here before the watcher has passed it on.
  if (std::optional<LinkFailure> link = linkFailure()) {
    return watch::Loss{link->peer, watch::wire::Cause::kLinkFailed, members_.rank, 0};
  }
  return std::nullopt;
}

Status Health::lossStatus(const watch::Loss& loss) const {
  if (loss.cause == watch::wire::Cause::kLinkFailed) {
    std::string text = "the network link between rank " + std::to_string(loss.observer) +
                       " and rank " + std::to_string(loss.rank) + " failed";
    // This rank's own words where it is one end of the link, whichever end told the others.
    std::optional<LinkFailure> mine = linkWords();
    const bool ours = (loss.observer == members_.rank && mine && mine->peer == loss.rank) ||
                      (loss.rank == members_.rank && mine && mine->peer == loss.observer);
    if (ours) text += ": " + mine->why;
    return remoteError(text +
                       "; the communicator cannot be used again (ncclCommShrink can make "
                       "one without rank " +
                       std::to_string(loss.rank) + ")");
  }
  const std::vector<PeerInfo>& peers = members_.peers();
  std::string who = "rank " + std::to_string(loss.rank);
  if (loss.rank == members_.rank) {
    who = "this rank (" + std::to_string(members_.rank) + ") was given up by its peers";
  } else if (loss.rank < static_cast<int>(peers.size()) && peers[loss.rank].pid != 0) {
    // The pid is known once the peers exchanged their details; a rank lost before has none.
    who += " (pid " + std::to_string(peers[loss.rank].pid) + ")";
  }
  return remoteError(who + " is lost: " + loss.describe() +
                     "; the communicator cannot be used again (ncclCommShrink can make one "
                     "without it)");
}

std::vector<std::string> Health::lossWords() const {
  std::vector<std::string> words;
  if (!watch_) return words;
  for (const watch::Loss& loss : watch_->losses()) words.push_back(lossStatus(loss).message());
  return words;
}

Status Health::explainFailure(const Status& s) const { return explain(s, /*mayWait=*/true); }

Status Health::explainFault(const Status& fault) const {
  if (fault.ok()) return fault;
  return explain(fault, /*mayWait=*/!faultWaited_.exchange(true));
}

Status Health::explain(const Status& s, bool mayWait) const {
  if (s.ok()) return s;
  std::optional<watch::Loss> loss = watch_ ? watch_->firstLoss() : std::nullopt;
  if (watch_ && mayWait) {
    // A peer's death reaches a transport as a remote error (a greeting or a read that met
    // end of file) or a system one (a reset connection, a refused connect).
    const bool peerShaped =
        s.code() == ErrorCode::kRemoteError || s.code() == ErrorCode::kSystemError;
    if (!loss && peerShaped && !aborted_.load()) {
      loss = watch_->awaitLoss(kLossGraceMs);
    }
  }
  if (!loss) loss = firstLoss();  // this rank's own link failure, not passed on yet
  if (!loss) return s;
  return remoteError(lossStatus(*loss).message() + "; the call stopped: " + s.message());
}

Status Health::checkUsable() const {
  if (std::optional<watch::Loss> loss = firstLoss()) return lossStatus(*loss);
  if (finalized_) return invalidUsage("communicator was finalized");
  if (aborted_.load()) return invalidUsage("communicator was aborted");
  if (revoked_) {
    return invalidUsage(
        "communicator was revoked: only ncclCommDestroy, ncclCommSplit and ncclCommShrink are "
        "left");
  }
  if (broken_) return broken_->withContext("communicator unusable after an earlier error");
  return Status::success();
}

}  // namespace braid::comm
