// The socket bootstrap (see bootstrap.h): join through the root, then keep
// two sockets per rank, one to the ring successor and one from the
// predecessor, and run allGather around that ring.
//
// allGather in a ring of n ranks takes n - 1 steps. In step s, rank r sends
// slot (r - s) mod n, which it owns (s = 0) or received in step s - 1, to its
// successor, and receives slot (r - s - 1) mod n from its predecessor. Send
// and receive proceed together so that slots larger than a socket buffer
// cannot deadlock the ring.
#include "bootstrap/bootstrap.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstring>
#include <thread>
#include <vector>

#include "base/deadline.h"
#include "base/env.h"
#include "base/log.h"
#include "base/socket.h"
#include "base/socket_address.h"
#include "base/socket_greeting.h"
#include "base/socket_io.h"
#include "bootstrap/root.h"
#include "bootstrap/root_blocks.h"

namespace braid::bootstrap {
namespace {

/// How long a rank waits for the root's answer past its own deadline: the
/// root gives up at about the same time and its answer names the missing
/// ranks, which is worth a moment more than a bare timeout.
constexpr int64_t kRootAnswerGraceMs = 1000;

/// What create() carries between its phases.
struct Joining {
  int rank;
  int nranks;
  uint64_t magic;
  int64_t timeoutMs;
  Deadline deadline;
  sockaddr_storage root;
  UniqueIdContents id;  ///< whose secret every connection proves (the first id's)
  /// Every id's contents (ncclCommInitRankScalable: several), and the one whose root this rank
  /// meets (root_blocks.h).
  std::vector<UniqueIdContents> roots;
  int iroot = 0;

  int nroots() const { return static_cast<int>(roots.size()); }
  const UniqueIdContents& myRoot() const { return roots[iroot]; }

  int successor() const { return (rank + 1) % nranks; }
  int predecessor() const { return (rank - 1 + nranks) % nranks; }
  Status timedOut(const std::string& what) const {
    if (deadline.cancelled()) return cancelled(what);
    return remoteError("bootstrap: timed out after " + std::to_string(timeoutMs) + " ms " + what);
  }
  Status cancelled(const std::string& what) const {
    return remoteError("bootstrap: rank " + std::to_string(rank) + " stopped " + what +
                       ": the communicator's creation was aborted");
  }
};

/// Words a failed transfer with `peer`'s rank; the messages are part of the
/// contract (tests and users grep for them).
Status ioFailure(const sockets::IoResult& io, int peer, int64_t timeoutMs) {
  switch (io.end) {
    case sockets::IoEnd::kTimedOut:
      return remoteError("bootstrap: timed out after " + std::to_string(timeoutMs) +
                         " ms waiting for rank " + std::to_string(peer));
    case sockets::IoEnd::kPeerClosed:
      return remoteError("rank " + std::to_string(peer) + " closed the bootstrap connection");
    case sockets::IoEnd::kCancelled:
      return remoteError("bootstrap: stopped waiting for rank " + std::to_string(peer) +
                         ": the communicator was aborted, or a peer was lost");
    default:
      return systemError("bootstrap: connection to rank " + std::to_string(peer) + ": " +
                         io.describe());
  }
}

/// Where this rank listens: loopback when the root is (a one-host job that
/// may have no other interface up), else this host's reachable address.
sockaddr_storage listenAddressFor(const sockaddr_storage& root) {
  if (!sockets::isLoopback(root)) return sockets::pickLocalAddress(env::get("SOCKET_IFNAME"));
  sockaddr_storage local{};
  local.ss_family = root.ss_family;
  if (root.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&local)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  } else {
    reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr = in6addr_loopback;
  }
  return local;
}

/// Why a transfer with the root at `rootText` failed, as a rank says it.
Status rootIoFailure(const Joining& j, const sockets::IoResult& io, const std::string& rootText) {
  if (io.end == sockets::IoEnd::kCancelled) return j.cancelled("waiting for the root's answer");
  if (io.end == sockets::IoEnd::kTimedOut) {
    return j.timedOut("waiting for all " + std::to_string(j.nranks) +
                      " ranks to join (the root at " + rootText + " did not answer)");
  }
  return remoteError("bootstrap: lost the connection to the root at " + rootText + ": " +
                     io.describe());
}

/// A Hello sent: the connection, and how the greeting went (what connecting failed on is an
/// error of its own).
struct SentHello {
  sockets::Socket socket;
  sockets::IoResult io;
};

/// Connects to the root of id `iroot` and sends it a Hello as `helloRank` (this rank's, or one
/// past that root's block for an introduction).
Result<SentHello> helloToRoot(const Joining& j, int iroot, int helloRank,
                              const sockaddr_storage& listenAddr) {
  const UniqueIdContents& id = j.roots[iroot];
  Result<sockets::Socket> connected = sockets::connectWithRetry(rootAddress(id), j.deadline);
  if (!connected.ok()) {
    return Status(connected.status().code(),
                  "bootstrap: rank " + std::to_string(j.rank) + " could not reach the root" +
                      (j.nroots() > 1 ? " of id " + std::to_string(iroot) : std::string()) + ": " +
                      connected.status().message());
  }
  wire::Hello hello{};
  hello.magic = id.magic;
  hello.rank = helloRank;
  hello.nranks = j.nranks;
  hello.nroots = j.nroots();
  hello.iroot = iroot;
  hello.timeoutMs = j.timeoutMs;
  hello.remainingMs = j.deadline.isNever() ? 0 : std::max<int64_t>(1, j.deadline.remainingMs());
  hello.listenAddr = listenAddr;
  SentHello sent{std::move(connected).value(), {}};
  sent.io = sockets::sendProvenGreeting(sent.socket, proofOf(id, kProveRootHello), &hello,
                                        sizeof(hello), j.deadline);
  return sent;
}

/// The root's answer to a Hello: the connection and the answer's header.
struct RootAnswer {
  sockets::Socket socket;
  wire::ReplyHeader header{};
};

/// How many times a rank sends its Hello to a root that dropped it unread (root.h).
constexpr int kHelloAttempts = 20;

/// Sends a Hello (helloToRoot) and reads the answer's header, sending it again while the root
/// drops it unread: a reset before any answer means the root never filed it.
Result<RootAnswer> askRoot(const Joining& j, int iroot, int helloRank,
                           const sockaddr_storage& listenAddr, const Deadline& answerBy) {
  const std::string rootText = sockets::addressToString(rootAddress(j.roots[iroot]));
  for (int attempt = 1;; ++attempt) {
    BRAID_ASSIGN_OR_RETURN(SentHello sent, helloToRoot(j, iroot, helloRank, listenAddr));
    RootAnswer answer{std::move(sent.socket), {}};
    sockets::IoResult io = sent.io;
    if (io.ok())
      io = sockets::recvAll(answer.socket, &answer.header, sizeof(answer.header), answerBy);
    if (io.ok()) return answer;
    if (io.end != sockets::IoEnd::kPeerClosed || attempt == kHelloAttempts) {
      return rootIoFailure(j, io, rootText);
    }
    BRAID_INFO(
        "bootstrap: rank %d: the root at %s dropped its Hello unread (attempt %d of %d); "
        "sending it again",
        j.rank, rootText.c_str(), attempt, kHelloAttempts);
    std::this_thread::sleep_for(std::chrono::milliseconds(2 * attempt));
  }
}

/// The text of an error answer (its header read), as the rank reports it.
Status rootError(const RootAnswer& answer, const Deadline& answerBy) {
  std::string message(answer.header.length, '\0');
  sockets::IoResult io = sockets::recvAll(answer.socket, message.data(), message.size(), answerBy);
  if (!io.ok()) message = "(the root's message was cut off: " + io.describe() + ")";
  return remoteError("bootstrap: " + wire::printableText(message));
}

/// How long a rank waits for the root's answer.
Deadline answerDeadline(const Joining& j) {
  return j.deadline.isNever() ? j.deadline
                              : Deadline::afterMs(j.deadline.remainingMs() + kRootAnswerGraceMs)
                                    .cancelledBy(j.deadline.cancelFlag());
}

/// With several ids, the first rank of a block tells the previous block's root where it
/// listens, the ring successor of that root's last rank (root.h); the root files it at once.
Status introduceToPreviousRoot(const Joining& j, const sockaddr_storage& listenAddr) {
  if (j.nroots() == 1 || j.rank != firstRankOfRoot(j.iroot, j.nranks, j.nroots())) {
    return Status::success();
  }
  const int before = j.predecessor();
  const int iroot = rootOfRank(before, j.nranks, j.nroots());
  const Deadline answerBy = answerDeadline(j);
  BRAID_ASSIGN_OR_RETURN(const RootAnswer answer,
                         askRoot(j, iroot, before + 1, listenAddr, answerBy));
  const wire::ReplyRead read = wire::classifyReply(answer.header);
  if (read == wire::ReplyRead::kError) return rootError(answer, answerBy);
  if (read == wire::ReplyRead::kFiled) return Status::success();
  return remoteError("bootstrap: malformed answer to rank " + std::to_string(j.rank) +
                     "'s introduction from the root of id " + std::to_string(iroot));
}

/// Sends the Hello and returns the successor's listen address from the root.
Result<sockaddr_storage> joinThroughRoot(const Joining& j, const sockaddr_storage& listenAddr) {
  std::string rootText = sockets::addressToString(j.root);
  const Deadline answerBy = answerDeadline(j);
  BRAID_ASSIGN_OR_RETURN(const RootAnswer answer,
                         askRoot(j, j.iroot, j.rank, listenAddr, answerBy));
  const wire::ReplyRead read = wire::classifyReply(answer.header);
  if (read == wire::ReplyRead::kError) return rootError(answer, answerBy);
  sockaddr_storage successor{};
  if (read != wire::ReplyRead::kAddress) {
    return remoteError("bootstrap: malformed answer from the root at " + rootText);
  }
  sockets::IoResult io = sockets::recvAll(answer.socket, &successor, sizeof(successor), answerBy);
  if (!io.ok()) {
    return remoteError("bootstrap: lost the connection to the root at " + rootText + ": " +
                       io.describe());
  }
  if (j.nranks > 1 && !wire::isRankAddress(successor)) {
    return remoteError("bootstrap: the root at " + rootText + " named no usable address for rank " +
                       std::to_string(j.successor()));
  }
  return successor;
}

Result<sockets::Socket> connectSuccessor(const Joining& j, const sockaddr_storage& address) {
  int peer = j.successor();
  Result<sockets::Socket> connected = sockets::connectWithRetry(address, j.deadline);
  if (!connected.ok()) {
    if (connected.status().code() == ErrorCode::kRemoteError) {
      return j.timedOut("connecting to rank " + std::to_string(peer) + " at " +
                        sockets::addressToString(address));
    }
    return connected.status().withContext("bootstrap: rank " + std::to_string(peer));
  }
  return std::move(connected).value();
}

/// Answers the successor's challenge with this rank's handshake.
Status greetSuccessor(const Joining& j, sockets::Socket& next) {
  wire::RingHandshake handshake{j.magic, j.rank, 0};
  sockets::IoResult io = sockets::sendProvenGreeting(next, proofOf(j.id, kProveBootstrapRing),
                                                     &handshake, sizeof(handshake), j.deadline);
  if (!io.ok()) return ioFailure(io, j.successor(), j.timeoutMs);
  return Status::success();
}

/// Accepts until the predecessor shows up with the right handshake; anything
/// else that connects is dropped with a warning.
Result<sockets::Socket> acceptPredecessor(const Joining& j, const sockets::Socket& listener) {
  int peer = j.predecessor();
  sockets::GreetingAcceptor acceptor(listener, sizeof(wire::RingHandshake),
                                     proofOf(j.id, kProveBootstrapRing));
  while (true) {
    sockets::Socket connection;
    std::vector<char> greeting;
    sockets::IoResult io = acceptor.next(j.deadline, &connection, &greeting);
    if (io.end == sockets::IoEnd::kTimedOut || io.end == sockets::IoEnd::kCancelled) {
      return j.timedOut("waiting for rank " + std::to_string(peer));
    }
    if (!io.ok()) {
      return systemError("bootstrap: accepting rank " + std::to_string(peer) + ": " +
                         io.describe());
    }
    wire::RingHandshake handshake;
    memcpy(&handshake, greeting.data(), sizeof(handshake));
    if (handshake.magic == j.magic && handshake.rank == peer) return connection;
    BRAID_WARN("bootstrap: rank %d dropped a stray connection (magic 0x%016" PRIx64
               ", rank %d; expected rank %d)",
               j.rank, handshake.magic, handshake.rank, peer);
  }
}

class SocketBootstrap final : public Bootstrap {
 public:
  SocketBootstrap(const Joining& j, sockets::Socket next, sockets::Socket prev,
                  const sockaddr_storage& localAddress)
      : cancel_(j.deadline.cancelFlag()),
        id_(j.id),
        localAddress_(localAddress),
        rank_(j.rank),
        nranks_(j.nranks),
        magic_(j.magic),
        timeoutMs_(j.timeoutMs),
        next_(std::move(next)),
        prev_(std::move(prev)) {}

  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  uint64_t magic() const override { return magic_; }
  sockets::Proof proof(uint32_t purpose) const override {
    return proofOf(id_, static_cast<ProofPurpose>(purpose));
  }
  sockaddr_storage localAddress() const override { return localAddress_; }
  Status allGather(void* data, size_t bytesPerRank) override;
  Status barrier() override;
  void abort() override;

 private:
  /// The status to return once the ring is no longer usable.
  Status unusable() const;

  /// The communicator's stop flag: a rank waiting in allGather gives up when it rises.
  const std::atomic<bool>* const cancel_;
  const UniqueIdContents id_;
  const sockaddr_storage localAddress_;
  const int rank_;
  const int nranks_;
  const uint64_t magic_;
  const int64_t timeoutMs_;
  sockets::Socket next_;  ///< to (rank + 1) % nranks
  sockets::Socket prev_;  ///< from (rank - 1 + nranks) % nranks
  std::atomic<bool> aborted_{false};
  /// The first failure; the ring is out of step after one, so later calls
  /// fail with it rather than exchanging bytes with the wrong step.
  Status broken_;
};

Status SocketBootstrap::unusable() const {
  if (aborted_.load()) return remoteError("bootstrap: aborted");
  if (!broken_.ok()) {
    return Status(broken_.code(),
                  "bootstrap: unusable after an earlier failure: " + broken_.message());
  }
  return Status::success();
}

Status SocketBootstrap::allGather(void* data, size_t bytesPerRank) {
  BRAID_TRY(unusable());
  if (nranks_ == 1 || bytesPerRank == 0) return Status::success();
  Deadline deadline = Deadline::afterMs(timeoutMs_).cancelledBy(cancel_);
  char* slots = static_cast<char*>(data);
  for (int step = 0; step < nranks_ - 1; ++step) {
    int sendSlot = (rank_ - step + nranks_) % nranks_;
    int recvSlot = (rank_ - step - 1 + nranks_) % nranks_;
    sockets::IoResult io =
        sockets::exchange(next_, slots + sendSlot * bytesPerRank, bytesPerRank, prev_,
                          slots + recvSlot * bytesPerRank, bytesPerRank, deadline);
    if (io.ok()) continue;
    if (aborted_.load()) return unusable();
    int peer = io.onSend ? (rank_ + 1) % nranks_ : (rank_ - 1 + nranks_) % nranks_;
    broken_ = ioFailure(io, peer, timeoutMs_);
    return broken_;
  }
  return Status::success();
}

Status SocketBootstrap::barrier() {
  std::vector<char> flags(nranks_, 1);
  return allGather(flags.data(), 1);
}

void SocketBootstrap::abort() {
  aborted_.store(true);
  next_.shutdown();
  prev_.shutdown();
}

}  // namespace

namespace {

/// What a rank of `nranks` made from `ids` (several: ncclCommInitRankScalable) joins with:
/// every id unpacked and distinct, the communicator's identity the first id's.
Result<Joining> prepareJoining(const std::vector<UniqueId>& ids, int rank, int nranks,
                               int64_t timeoutMs, const std::atomic<bool>* cancel) {
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return invalidArgument("bootstrap: rank " + std::to_string(rank) + " of " +
                           std::to_string(nranks) + " is out of range");
  }
  if (ids.empty() || ids.size() > static_cast<size_t>(nranks)) {
    return invalidArgument("bootstrap: " + std::to_string(ids.size()) + " unique ids for " +
                           std::to_string(nranks) +
                           " ranks: give from 1 to as many ids as ranks, each root meeting one "
                           "block of ranks at least");
  }
  std::vector<UniqueIdContents> roots;
  for (size_t i = 0; i < ids.size(); ++i) {
    Result<UniqueIdContents> unpacked = unpackUniqueId(ids[i]);
    if (!unpacked.ok()) return unpacked.status().withContext("unique id " + std::to_string(i));
    const UniqueIdContents& contents = unpacked.value();
    for (size_t k = 0; k < roots.size(); ++k) {
      if (roots[k].magic == contents.magic) {
        return invalidArgument("bootstrap: unique ids " + std::to_string(k) + " and " +
                               std::to_string(i) + " are the same id; each root needs its own");
      }
    }
    roots.push_back(contents);
  }
  const int iroot = rootOfRank(rank, nranks, static_cast<int>(roots.size()));
  Joining j{rank,
            nranks,
            roots[0].magic,
            timeoutMs,
            Deadline::afterMs(timeoutMs).cancelledBy(cancel),
            rootAddress(roots[iroot]),
            roots[0],
            roots,
            iroot};
  return j;
}

/// An id of a fixed address (BRAID_COMM_ID) has no root until the first rank of its block
/// starts one there.
Status startRootIfMine(const Joining& j) {
  if ((j.myRoot().flags & kRootStartedByRank0) == 0 ||
      j.rank != firstRankOfRoot(j.iroot, j.nranks, j.nroots())) {
    return Status::success();
  }
  Result<sockets::Socket> listener = sockets::listenOn(j.root, /*reuseAddr=*/true);
  if (!listener.ok()) {
    return listener.status().withContext("bootstrap: rank " + std::to_string(j.rank) +
                                         " cannot start the root");
  }
  return startRoot(std::move(listener).value(), j.myRoot(), j.timeoutMs);
}

}  // namespace

Result<std::unique_ptr<Bootstrap>> Bootstrap::create(const UniqueId& id, int rank, int nranks,
                                                     int64_t timeoutMs,
                                                     const std::atomic<bool>* cancel) {
  return create(std::vector<UniqueId>{id}, rank, nranks, timeoutMs, cancel);
}

Result<std::unique_ptr<Bootstrap>> Bootstrap::create(const std::vector<UniqueId>& ids, int rank,
                                                     int nranks, int64_t timeoutMs,
                                                     const std::atomic<bool>* cancel) {
  BRAID_ASSIGN_OR_RETURN(const Joining j, prepareJoining(ids, rank, nranks, timeoutMs, cancel));
  BRAID_TRY(startRootIfMine(j));

  // One rank has no ring; it still meets the root, whose thread ends then.
  sockets::Socket listener;
  const sockaddr_storage localAddr = listenAddressFor(j.root);
  sockaddr_storage listenAddr{};
  if (nranks > 1) {
    BRAID_ASSIGN_OR_RETURN(listener, sockets::listenOn(localAddr, false));
    BRAID_ASSIGN_OR_RETURN(listenAddr, sockets::boundAddress(listener));
  }
  BRAID_TRY(introduceToPreviousRoot(j, listenAddr));
  BRAID_ASSIGN_OR_RETURN(sockaddr_storage successorAddr, joinThroughRoot(j, listenAddr));
  sockets::Socket next;
  sockets::Socket prev;
  if (nranks > 1) {
    // Connect first: the kernel completes it before the successor accepts, so
    // every rank connecting before accepting cannot deadlock.
    BRAID_ASSIGN_OR_RETURN(next, connectSuccessor(j, successorAddr));
    // The successor sends its challenge only once it accepts, which it does after its own
    // connect: answer it on a thread of its own while this one accepts the predecessor.
    Status greeted;
    std::thread greeter([&] { greeted = greetSuccessor(j, next); });
    Result<sockets::Socket> accepted = acceptPredecessor(j, listener);
    if (!accepted.ok()) next.shutdown();  // the greeter gives up at once
    greeter.join();
    BRAID_TRY(greeted);
    BRAID_ASSIGN_OR_RETURN(prev, std::move(accepted));
  }
  BRAID_INFO("bootstrap: rank %d of %d joined (magic 0x%016" PRIx64 ")", rank, nranks, j.magic);
  return std::unique_ptr<Bootstrap>(
      std::make_unique<SocketBootstrap>(j, std::move(next), std::move(prev), localAddr));
}

}  // namespace braid::bootstrap
