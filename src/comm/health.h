// Health: whether a communicator may still be used, and why not.
//
// It owns what stops a communicator and what says so: the stop flag every wait watches (raised
// by abort, revoke, a caller abandoning a creation, and the watcher when a peer is lost), the
// abort, revoke, finalize and broken states, the count of calls running (abort waits for them
// to leave), the stop flags of children being created, and the watcher of the ring of ranks
// (watch/peer_watch.h), whose word of a lost peer turns a transport's "connection closed" into
// "rank 3 (pid 4242) is lost".
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "braid/status.h"
#include "comm/members.h"
#include "config.h"
#include "watch/peer_watch.h"

namespace braid::comm {

// Counts a call as running for Comm::abort() (declared first in a call, so
// it is released last, after the call's final write to the communicator).
class ActiveCall {
 public:
  explicit ActiveCall(std::atomic<int>& count) : count_(count) { count_.fetch_add(1); }
  ~ActiveCall() { count_.fetch_sub(1); }
  ActiveCall(const ActiveCall&) = delete;
  ActiveCall& operator=(const ActiveCall&) = delete;

 private:
  std::atomic<int>& count_;
};

class Health {
 public:
  explicit Health(const Members& members) : members_(members) {}

  /// ncclCommAbort was called (the stop flag below is raised with it).
  std::atomic<bool> aborted{false};
  /// What every wait of this communicator watches (WaitContext::abort, the deadlines of the
  /// bootstrap and of creation). Shared so that the handle of a creation still running can
  /// raise it (CommOptions::stop).
  std::shared_ptr<std::atomic<bool>> stop = std::make_shared<std::atomic<bool>>(false);
  /// ncclCommRevoke was called: only destroy, split and shrink are left.
  std::atomic<bool> revoked{false};
  bool finalized = false;
  /// Set by the first failed call: the FIFOs are then mid-message and the communicator cannot
  /// be used again (as with NCCL's async errors).
  std::optional<Status> broken;
  /// Calls now running on this communicator; abort() waits for them to leave before the caller
  /// may free the communicator.
  std::atomic<int> activeCalls{0};
  /// The GPU's abort word once the GPU side exists, for the watcher's thread (which must not
  /// touch the GPU side itself while creation may still be making it).
  std::atomic<uint32_t*> gpuAbortWord{nullptr};
  uint64_t shrinks = 0;  ///< shrink() calls so far: the key of the next one's letter
  /// The watcher of the ring of ranks; null with one rank. Its thread calls the loss handler,
  /// so it is stopped (stopWatching) before anything that handler touches goes away.
  std::unique_ptr<watch::PeerWatch> watch;

  /// Starts the watcher, after the bootstrap and before anything that waits for peers;
  /// `onLost` runs on its thread.
  Status startWatch(const Config& config, std::function<void(const watch::Loss&)> onLost);
  /// Says goodbye to the neighbours, so that they take this rank's going for a departure, not a
  /// death, and stops the watcher.
  void stopWatching();
  /// The stop flag and the GPU's abort word raised: every wait and every waiting kernel ends.
  void raiseStop();
  /// Raises the stop flag of every child being created (split, shrink) too.
  void stopChildren();
  /// Runs the creation of a child communicator with `stop` counted among the children's.
  template <typename Create>
  auto withChildStop(const std::shared_ptr<std::atomic<bool>>& childStop, Create create) {
    {
      std::lock_guard<std::mutex> lock(childrenMutex_);
      childStops_.push_back(childStop);
    }
    auto made = create();
    std::lock_guard<std::mutex> lock(childrenMutex_);
    childStops_.erase(std::find(childStops_.begin(), childStops_.end(), childStop));
    return made;
  }

  /// This rank's transport link to `peer` failed (the verbs proxy's thread, a socket proxy's):
  /// raises the stop flag so that every wait of this rank ends; then, unless the watch hears of
  /// a lost rank within a moment (a death breaks links too, and is the better news), keeps the
  /// first such `why` (the NIC, the status) for the errors and has the watcher tell every other
  /// rank. Blocks its caller for that moment (kLinkGraceMs). Ignored once stopWatching() began
  /// (the communicator goes away, and its links break with it).
  void noteLinkFailure(int peer, const std::string& why);

  /// The first peer lost, if any.
  std::optional<watch::Loss> firstLoss() const;
  /// ncclRemoteError naming the lost rank, its process and how it was found.
  Status lossStatus(const watch::Loss& loss) const;
  /// Every loss, worded as lossStatus does.
  std::vector<std::string> lossWords() const;
  /// The error a failed call returns: when a lost peer is behind it, the loss first, then what
  /// the call saw (waiting a moment for the word of a loss when the call saw a remote error).
  Status explainFailure(const Status& s) const;
  /// explainFailure for a kernel's fault, which ncclCommGetAsyncError reports again at every
  /// poll: the first poll that sees it waits for the word of a loss as a call would (the stop
  /// that ended the kernel may come from a broken link whose dead peer the watcher has not
  /// named yet); later polls take what is known then, without waiting again.
  Status explainFault(const Status& fault) const;
  /// Refuses work on a finalized, aborted, revoked or broken communicator, or one that lost a
  /// peer (its calls could only wait for the dead). The GPU side adds its kernels' faults.
  Status checkUsable() const;

 private:
  /// The first link failure this rank saw itself.
  struct LinkFailure {
    int peer = -1;
    std::string why;
  };
  std::optional<LinkFailure> linkFailure() const;
  /// What this rank saw of its link failure, kept from the moment it is noted (also when a
  /// death turns out to be the news), for the words of a link failure it is one end of.
  std::optional<LinkFailure> linkWords() const;
  /// explainFailure's work; waits for the word of a loss only where `mayWait`.
  Status explain(const Status& s, bool mayWait) const;
  /// noteLinkFailure's work, for the first link failure only.
  void handleLinkFailure(int peer, const std::string& why);

  const Members& members_;
  mutable std::mutex linkMutex_;
  bool linkNoted_ = false;      ///< a link failure came (the first is the one handled)
  bool linkInFlight_ = false;   ///< it is being handled (it uses the watcher)
  bool watchStopping_ = false;  ///< stopWatching() began: links break as the communicator goes
  std::condition_variable linkHandled_;
  std::optional<LinkFailure> linkFailure_;
  std::atomic<bool> linkFailed_{false};  ///< linkFailure_ is set (it never goes back)
  std::optional<LinkFailure> linkWords_;
  mutable std::atomic<bool> faultWaited_{false};  ///< explainFault waited once already
  std::mutex childrenMutex_;
  std::vector<std::shared_ptr<std::atomic<bool>>> childStops_;
};

}  // namespace braid::comm
