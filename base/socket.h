// Small TCP helpers for the out-of-band network (bootstrap, later the socket
// transport): an owning socket, listen / connect / accept, and transfers that
// give up at a Deadline.
//
// Every wait is a poll() bounded by the deadline, so nothing here blocks
// forever unless the caller asked for Deadline::never(). Transfers report how
// they ended (IoResult) rather than a worded Status, because only the caller
// knows whom it was waiting for ("timed out waiting for rank 3").
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "braid/status.h"

namespace braid::sockets {

/// Owns one socket file descriptor; closes it on destruction.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { close(); }
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void close();
  /// Wakes every thread blocked on this socket (poll returns, reads see EOF,
  /// accept fails) without closing the descriptor, so it is safe to call
  /// while another thread still uses it.
  void shutdown() const;

 private:
  int fd_ = -1;
};

/// How a blocking transfer ended.
/// kCancelled: the deadline's cancel flag rose (Deadline::cancelledBy).
enum class IoEnd { kDone, kTimedOut, kPeerClosed, kFailed, kCancelled };

struct IoResult {
  IoEnd end = IoEnd::kDone;
  int sysErrno = 0;     ///< the errno behind kFailed
  bool onSend = false;  ///< exchange(): the send side is the one that stopped
  bool ok() const { return end == IoEnd::kDone; }
  /// "timed out", "peer closed the connection" (with the system's words for a reset or a broken
  /// pipe) or the system error text.
  std::string describe() const;
};

/// The two addresses of a connection, taken while it is up: a connection that was reset has no
/// peer name any more, and its error still has to say where it ran.
struct ConnectionEnds {
  sockaddr_storage local{};
  sockaddr_storage remote{};
};
ConnectionEnds connectionEnds(const Socket& socket);
/// "10.0.0.1:41000 (eth0) -> 10.0.0.2:5000": where a connection ran, for errors. The interface
/// is the one that holds the local address now (left out when none does).
std::string describe(const ConnectionEnds& ends);
/// The name of the interface that holds `addr` (its port ignored), or "" when none does.
std::string interfaceOf(const sockaddr_storage& addr);

/// How every connection made or accepted here notices a peer that went silent (a cable pulled,
/// a host that hung or lost power), so that a transfer blocked on a dead link fails with
/// ETIMEDOUT instead of waiting forever: TCP gives up on data left unacknowledged for
/// kUserTimeoutMs (TCP_USER_TIMEOUT), and probes a connection idle for kKeepIdleS every
/// kKeepIntervalS (SO_KEEPALIVE), giving up after kKeepCount probes unanswered. Far above any
/// pause of a live peer's kernel, which acknowledges for a process that is stopped or busy.
struct Liveness {
  static constexpr int kUserTimeoutMs = 30000;
  static constexpr int kKeepIdleS = 10;
  static constexpr int kKeepIntervalS = 5;
  static constexpr int kKeepCount = 3;
};

/// What every connection made or accepted here gets (and a caller that accepts on its own
/// gives its connections): TCP_NODELAY, and Liveness's timeouts. Best effort.
void tuneConnection(int fd);

/// "1.2.3.4:5678" or "[::1]:5678"; "<unspecified>" for AF_UNSPEC.
std::string addressToString(const sockaddr_storage& addr);
/// The length to pass to bind/connect for this address family.
socklen_t addressLength(const sockaddr_storage& addr);
bool isLoopback(const sockaddr_storage& addr);

/// Parses "host:port", "[ipv6]:port" or "ipv6-literal" forms with a port;
/// `host` may be a name, resolved with getaddrinfo (IPv4 preferred).
Result<sockaddr_storage> resolveHostPort(const std::string& hostPort);

/// An address of this host that other hosts can reach, with port 0: the
/// first IPv4 interface that is up and not loopback. `ifnameFilter` is
/// NCCL_SOCKET_IFNAME's syntax: comma-separated name prefixes, "^" in front
/// to exclude them instead, "=" in front for exact names. Falls back to
/// 127.0.0.1 (with a warning when a filter matched nothing).
sockaddr_storage pickLocalAddress(const std::optional<std::string>& ifnameFilter);

/// A listening socket bound to `addr` (port 0: an ephemeral one).
Result<Socket> listenOn(const sockaddr_storage& addr, bool reuseAddr);
/// The address a socket is bound to (with the port the kernel chose).
Result<sockaddr_storage> boundAddress(const Socket& socket);

/// Connects to `addr`, retrying refused or unreachable attempts until the
/// deadline, since the listener may not be up yet. kRemoteError on timeout.
/// With `from`, the connection leaves from that address (any port): by that
/// interface, where several reach the peer.
Result<Socket> connectWithRetry(const sockaddr_storage& addr, const Deadline& deadline,
                                const sockaddr_storage* from = nullptr);

/// Sets `addr`'s port (IPv4 or IPv6), and reads it.
void setPort(sockaddr_storage& addr, uint16_t port);
uint16_t portOf(const sockaddr_storage& addr);

/// One connection attempt, for a listener known to be up: a refusal is an error at once.
Result<Socket> connectOnce(const sockaddr_storage& addr, const Deadline& deadline);

IoResult sendAll(const Socket& socket, const void* data, size_t bytes, const Deadline& deadline);
IoResult recvAll(const Socket& socket, void* data, size_t bytes, const Deadline& deadline);
/// recvAll of a bulk payload (a slot's bytes): while at least kBulkWakeBytes are still to come,
/// the wait between two reads ends only once that many have arrived (SO_RCVLOWAT), not at each
/// segment, so a large receive wakes its thread a few times instead of once per arrival. The
/// socket's low-water mark is back at one byte when it returns.
IoResult recvBulk(const Socket& socket, void* data, size_t bytes, const Deadline& deadline);
/// How much a bulk receive waits to have arrived before it reads again.
inline constexpr size_t kBulkWakeBytes = 256 * 1024;

/// sendAll of `head` and then `data`, both in one sendmsg where the socket takes them (a
/// message's header and its payload: one system call, one segment where they fit).
IoResult sendAllv(const Socket& socket, const void* head, size_t headBytes, const void* data,
                  size_t bytes, const Deadline& deadline);

/// Sends to `to` and receives from `from` at the same time, so that a ring of
/// ranks all sending more than a socket buffer holds cannot deadlock.
IoResult exchange(const Socket& to, const void* sendData, size_t sendBytes, const Socket& from,
                  void* recvData, size_t recvBytes, const Deadline& deadline);

/// What a connection's first message must prove: that its sender holds the communicator's
/// secret (the unique id's, bootstrap/unique_id.h), for one purpose (the root, the ring, the
/// watcher, a transport's FIFO). The listener sends a fresh random challenge; the connecting
/// side answers with its greeting and HMAC-SHA-256(secret, purpose, challenge, greeting), so a
/// port scanner, a stale rank of another job or a replayed greeting proves nothing.
struct Proof {
  std::array<uint8_t, 16> secret{};
  uint32_t purpose = 0;
};
inline constexpr size_t kChallengeBytes = 16;
inline constexpr size_t kProofTagBytes = 32;
using Challenge = std::array<uint8_t, kChallengeBytes>;
using ProofTag = std::array<uint8_t, kProofTagBytes>;

/// A fresh random challenge.
Challenge newChallenge();
/// The tag that answers `challenge` for `greeting`.
ProofTag proofTag(const Proof& proof, const Challenge& challenge, const void* greeting,
                  size_t bytes);
/// The connecting side: reads the listener's challenge, then sends `greeting` and its tag.
IoResult sendProvenGreeting(const Socket& socket, const Proof& proof, const void* greeting,
                            size_t bytes, const Deadline& deadline);

/// Accepts connections and reads a fixed-size first message ("greeting")
/// from each. All half-greeted connections are watched at once, so a silent
/// or slow client cannot hold up the ones behind it; at most kMaxPending wait
/// at once (the oldest goes first), each for kPendingTimeoutMs at most, so a
/// flood of silent connections holds no descriptors for long. With a Proof,
/// each connection gets a challenge and a greeting whose tag does not answer it
/// is dropped.
class GreetingAcceptor {
 public:
  static constexpr size_t kMaxPending = 64;
  static constexpr int64_t kPendingTimeoutMs = 10000;

  /// `listener` must outlive the acceptor.
  GreetingAcceptor(const Socket& listener, size_t greetingBytes,
                   std::optional<Proof> proof = std::nullopt)
      : listener_(listener), greetingBytes_(greetingBytes), proof_(proof) {}

  /// The next connection whose greeting arrived in full (and, with a Proof,
  /// answered its challenge). Connections that close before that, or answer
  /// wrong, are dropped. kFailed when the listener broke (or was shut down).
  IoResult next(const Deadline& deadline, Socket* connection, std::vector<char>* greeting);
  /// Connections dropped so far because their tag was wrong (for tests and logs).
  size_t refused() const { return refused_; }

 private:
  struct Pending {
    Socket socket;
    std::vector<char> buffer;  ///< the greeting, then (with a Proof) its tag
    size_t received = 0;
    Challenge challenge{};
    std::chrono::steady_clock::time_point since;
  };
  bool acceptPending();
  /// Reads what is there; true when the connection is finished (full or dead).
  bool readPending(Pending& pending);
  /// With a Proof: whether a full buffer's tag answers its challenge.
  bool proven(const Pending& pending) const;

  const Socket& listener_;
  size_t greetingBytes_;
  std::optional<Proof> proof_;
  std::vector<Pending> pending_;
  size_t refused_ = 0;
};

}  // namespace braid::sockets
