// Seeing a peer die within a moment, whatever BRAID_TIMEOUT_MS says.
//
// A rank killed in the middle of a collective leaves its peers waiting on FIFO counters that
// will never move; their deadline (10 minutes by default) is the only thing that would end the
// wait. Each communicator therefore keeps a watcher: a thread and a listener of its own, and two
// TCP connections, to its ring successor and from its predecessor in rank order, that carry
// nothing but small frames.
//
//   death     the kernel closes a dead process's sockets, so its two neighbours read end of
//             file (SIGKILL, a crash, exit() alike) once the kernel has torn the process down,
//             which can take seconds; a neighbour on the same kernel hears of it as it begins,
//             through the rank's life line (watch/life_line.h). A rank that leaves in order
//             (destroy, finalize, abort) says kLeaving first, and its close is no loss
//   silence   a host that goes down, or a cut link, closes nothing: every rank sends a heartbeat
//             each interval, and a neighbour silent for BRAID_HEARTBEAT_TIMEOUT_MS is lost
//   the word  a watcher that finds a neighbour lost tells its other neighbour (kLoss), which
//             passes it on around the ring; the ring minus one rank is a line that the word
//             crosses from both ends, so every survivor hears of the first loss in a few
//             milliseconds (with several losses, every stretch of survivors hears of one)
//
// The communicator is told through the OnLoss callback, on the watcher's thread, once per lost
// rank; it raises its stop flag, the GPU's abort word and the bootstrap's, so that every wait of
// every call ends and the call returns ncclRemoteError naming the rank.
//
// The listener also takes letters: a message for one rank, sent on a connection of its own
// (post, collect). ncclCommShrink uses them to hand the survivors a new unique id when the
// parent's bootstrap ring, broken by the dead rank, can no longer carry it.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/deadline.h"
#include "base/encryption_key.h"
#include "base/socket.h"
#include "base/socket_greeting.h"
#include "bootstrap/bootstrap.h"
#include "braid/status.h"
#include "watch/life_line.h"
#include "watch/watch_wire.h"

namespace braid::watch {

/// A rank found lost, and how.
struct Loss {
  int rank = -1;
  wire::Cause cause = wire::Cause::kClosed;
  int observer = -1;     ///< the neighbour that saw it (this rank, or one that passed it on)
  int64_t silentMs = 0;  ///< kSilent: how long nothing came
  /// "its watch connection closed without a goodbye (the process ended), as rank 3 saw"
  std::string describe() const;
};

struct WatchOptions {
  uint64_t magic = 0;  ///< the communicator's bootstrap magic
  /// The unique id's secret, which every connection to a watcher proves (base/socket_greeting.h's
  /// Proof; the purpose is set per connection).
  sockets::Proof proof;
  int64_t heartbeatTimeoutMs = 0;             ///< silence after which a neighbour is lost; 0: never
  int64_t setupTimeoutMs = 0;                 ///< BRAID_TIMEOUT_MS, for joining the ring
  const std::atomic<bool>* cancel = nullptr;  ///< the communicator's stop flag, during setup
};

class PeerWatch {
 public:
  using OnLoss = std::function<void(const Loss&)>;

  /// Opens this rank's listener on the bootstrap's interface, exchanges the listeners' addresses
  /// through `bootstrap` (every rank calls it at the same point) and joins the ring; the
  /// watcher then runs until leave(). `onLoss` is called on the watcher's thread.
  static Result<std::unique_ptr<PeerWatch>> start(bootstrap::Bootstrap& bootstrap,
                                                  const WatchOptions& options, OnLoss onLoss);
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }

  /// The first loss heard of, if any.
  std::optional<Loss> firstLoss() const;
  /// Every rank lost so far, in the order heard of.
  std::vector<Loss> losses() const;
  /// The first loss, waiting up to `ms` for one: a call that failed on its own (a socket closed,
  /// a kernel timed out) learns whether a loss is behind it before it words its error.
  std::optional<Loss> awaitLoss(int64_t ms) const;

  /// This rank's transport link to `peer` failed: the watcher passes it round the ring as a
  /// loss of `peer` (Cause::kLinkFailed, this rank observing), so that every rank's waits end,
  /// not only those on the link. Any thread; it returns at once.
  void reportLinkFailure(int peer);

  /// Leaves in order: tells both neighbours, then stops the thread. Idempotent. `abandoning`:
  /// the communicator was aborted here, and the neighbours are to take the going for a loss
  /// (Cause::kAbandoned), since their calls cannot finish without this rank.
  void leave(bool abandoning = false);

  /// Sends a letter of `bytes` (<= wire::kMaxLetterBytes) with `key` to `peer`'s watcher.
  Status post(int peer, uint64_t key, const void* payload, size_t bytes, const Deadline& deadline);
  /// The payload of the letter with `key`, once it has come (each letter is collected once).
  Result<std::vector<char>> collect(uint64_t key, const Deadline& deadline);

 private:
  /// A neighbour's connection as the thread reads it.
  struct Link {
    sockets::Socket socket;
    int peer = -1;
    bool leaving = false;  ///< it said kLeaving: its close is no loss
    std::chrono::steady_clock::time_point lastHeard;
    wire::Frame partial{};
    size_t partialBytes = 0;
    std::unique_ptr<PeerLifeLine> line;  ///< on the same kernel: the neighbour's life line
  };
  /// A connection to the listener whose greeting (and letter) is still arriving.
  struct Arrival {
    sockets::Socket socket;
    std::vector<char> bytes;  ///< the greeting and its proof's tag, then a letter's payload
    size_t received = 0;
    sockets::Challenge challenge{};
    std::chrono::steady_clock::time_point since;
    /// While the process encrypts: the key, and the connector's hello as it arrives; the
    /// greeting then comes through the socket's seal (base/seal_handshake.h).
    std::shared_ptr<const sockets::PreSharedKey> key;
    std::vector<char> hello;
  };
  /// An arrival's encryption hello: false while it is still to come; true once it is done with,
  /// *drop saying whether the arrival goes (not sealing, another key, closed).
  bool readArrivalHello(Arrival& a, bool* drop);
  sockets::Proof proofFor(uint32_t purpose) const;
  /// Setup: takes the ring predecessor's connection from the listener.
  Status acceptPredecessor(int prev, const Deadline& deadline);

  PeerWatch(int rank, int nranks, const WatchOptions& options, OnLoss onLoss);
  void run();
  void pollOnce();
  void readLink(Link& link);
  void handleFrame(Link& link, const wire::Frame& frame);
  void acceptArrivals();
  /// Reads what an arrival sent; true when it is finished (delivered or dropped).
  bool readArrival(Arrival& arrival);
  void sendFrame(Link& link, const wire::Frame& frame);
  void sendHeartbeats();
  void checkSilence();
  /// Tries the neighbours' life lines: one whose holder ended without letting go is lost.
  void checkLifeLines();
  /// How long one poll waits: the heartbeat's interval, shorter while a life line is tried.
  int pollTimeoutMs() const;
  /// Records a loss heard of (first time only), tells onLoss_ and passes the word on.
  void learn(const Loss& loss);
  void closeForFork();

  const int rank_;
  const int nranks_;
  const WatchOptions options_;
  const OnLoss onLoss_;
  std::vector<sockaddr_storage> addresses_;  ///< every rank's listener
  std::unique_ptr<OwnLifeLine> ownLine_;     ///< held by the thread while it runs
  sockets::Socket listener_;
  Link successor_;
  Link predecessor_;
  std::vector<Arrival> arrivals_;
  std::chrono::steady_clock::time_point lastBeat_{};
  int wakeFd_ = -1;  ///< eventfd: leave() wakes the thread through it
  std::thread thread_;
  std::atomic<bool> leaving_{false};
  bool left_ = false;
  bool forkedAway_ = false;  ///< this is a fork's child: the thread is not here

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<Loss> losses_;
  /// losses_ is not empty: every call asks firstLoss, and nearly always the answer is no, which
  /// this says without the mutex.
  std::atomic<bool> anyLoss_{false};
  std::vector<Loss> reported_;           ///< reportLinkFailure's, for the thread to learn
  std::atomic<bool> abandoning_{false};  ///< leave(true): the goodbye says so
  std::map<uint64_t, std::vector<char>> letters_;

  friend struct ForkRegistry;
};

}  // namespace braid::watch
