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
#include <thread>
#include <utility>
#include <vector>

#include "base/deadline.h"
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
  ~Health();
  Health(const Health&) = delete;
  Health& operator=(const Health&) = delete;

  /// Counts a call as running until the guard goes: abort() waits for running calls to leave
  /// before the caller may free the communicator.
  ActiveCall countCall() { return ActiveCall(activeCalls_); }
  int runningCalls() const { return activeCalls_.load(); }

  /// What every wait of this communicator watches (WaitContext::abort, the deadlines of the
  /// bootstrap and of creation).
  std::atomic<bool>* stopFlag() const { return stop_.get(); }
  /// The same, shared: so that the handle of a creation still running can raise it.
  const std::shared_ptr<std::atomic<bool>>& sharedStop() const { return stop_; }
  /// At creation: the stop flag is the creating handle's (CommOptions::stop).
  void shareStop(std::shared_ptr<std::atomic<bool>> flag) { stop_ = std::move(flag); }
  bool stopped() const { return stop_->load(); }
  /// After a quiesce (revoke, shrink): the waits of the calls to come may run again.
  void lowerStop() { stop_->store(false); }

  /// ncclCommAbort was called (the stop flag is raised with it).
  bool aborted() const { return aborted_.load(); }
  void markAborted() { aborted_.store(true); }
  /// ncclCommRevoke was called: only destroy, split and shrink are left.
  bool revoked() const { return revoked_.load(); }
  /// Marks the communicator revoked; false if it was already.
  bool markRevoked() { return !revoked_.exchange(true); }
  bool finalized() const { return finalized_; }
  void markFinalized() { finalized_ = true; }
  /// The first failed call's error: the FIFOs are then mid-message and the communicator cannot
  /// be used again (as with NCCL's async errors).
  const std::optional<Status>& broken() const { return broken_; }
  void markBroken(Status why) { broken_ = std::move(why); }
  /// After a quiesce, whose stopped calls broke nothing that the next calls use.
  void clearBroken() { broken_.reset(); }
  /// The key of the next shrink() (each shrink's letter).
  uint64_t nextShrink() { return shrinks_++; }
  /// The GPU's abort word, once the GPU side has one, for the watcher's thread (which must not
  /// touch the GPU side itself while creation may still be making it); forgotten when the side
  /// frees it.
  void setGpuAbortWord(uint32_t* word) { gpuAbortWord_.store(word); }
  void forgetGpuAbortWord(uint32_t* word) {
    uint32_t* expected = word;
    gpuAbortWord_.compare_exchange_strong(expected, nullptr);
  }
  /// The watcher of the ring of ranks; null with one rank or once stopped.
  const watch::PeerWatch* watcher() const { return watch_.get(); }
  /// A letter to `peer`'s watcher, which it collects by `key` (shrink meets its survivors so:
  /// watch::PeerWatch::post).
  Status postLetter(int peer, uint64_t key, const void* payload, size_t bytes,
                    const Deadline& deadline);
  /// The letter of `key` this rank's watcher received (watch::PeerWatch::collect).
  Result<std::vector<char>> collectLetter(uint64_t key, const Deadline& deadline);

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
  /// rank. The moment (kLinkGraceMs) passes on a thread of its own, never the caller's: the
  /// verbs proxy drives every communicator of the process, and must not stop for one. Ignored
  /// once stopWatching() began (the communicator goes away, and its links break with it).
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
  /// noteLinkFailure's wait for the word of a death and its verdict, on linkThread_.
  void judgeLinkFailure(int peer, const std::string& why);

  const Members& members_;
  mutable std::mutex linkMutex_;
  bool linkNoted_ = false;      ///< a link failure came (the first is the one handled)
  bool linkInFlight_ = false;   ///< it is being handled (it uses the watcher)
  bool watchStopping_ = false;  ///< stopWatching() began: links break as the communicator goes
  std::condition_variable linkHandled_;
  std::optional<LinkFailure> linkFailure_;
  std::atomic<bool> linkFailed_{false};  ///< linkFailure_ is set (it never goes back)
  std::optional<LinkFailure> linkWords_;
  std::thread linkThread_;  ///< judges the first link failure; set under linkMutex_
  mutable std::atomic<bool> faultWaited_{false};  ///< explainFault waited once already
  std::atomic<bool> aborted_{false};
  std::shared_ptr<std::atomic<bool>> stop_ = std::make_shared<std::atomic<bool>>(false);
  std::atomic<bool> revoked_{false};
  bool finalized_ = false;
  std::optional<Status> broken_;
  std::atomic<int> activeCalls_{0};
  std::atomic<uint32_t*> gpuAbortWord_{nullptr};
  uint64_t shrinks_ = 0;
  /// Its thread calls the loss handler, so it is stopped (stopWatching) before anything that
  /// handler touches goes away.
  std::unique_ptr<watch::PeerWatch> watch_;
  std::mutex childrenMutex_;
  std::vector<std::shared_ptr<std::atomic<bool>>> childStops_;
};

}  // namespace braid::comm
