// The owning socket of the out-of-band network (bootstrap, watcher, the socket transport), and
// how connections are made: listen, connect (with retries, or once), and what every connection
// gets (TCP_NODELAY, the liveness timeouts). The rest of the ground floor's sockets, by idea:
// transfers bounded by a Deadline (socket_io.h), addresses and a connection's two ends
// (socket_address.h), authenticated greetings and the acceptor that reads them
// (socket_greeting.h).
//
// Every wait is a poll() bounded by the deadline, so nothing here blocks forever unless the
// caller asked for Deadline::never().
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <memory>
#include <string>

#include "base/deadline.h"
#include "base/socket_seal.h"
#include "braid/status.h"

namespace braid::sockets {

/// Owns one socket file descriptor; closes it on destruction.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { close(); }
  Socket(Socket&& other) noexcept : fd_(other.fd_), seal_(std::move(other.seal_)) {
    other.fd_ = -1;
  }
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  /// Gives up the descriptor (and forgets its seal).
  int release();
  void close();
  /// The seal every transfer on this connection goes through (socket_seal.h); null: plaintext.
  /// Owned here, so that it moves and ends with the connection.
  SocketSeal* seal() const { return seal_.get(); }
  void attachSeal(std::unique_ptr<SocketSeal> seal) { seal_ = std::move(seal); }
  /// Wakes every thread blocked on this socket (poll returns, reads see EOF,
  /// accept fails) without closing the descriptor, so it is safe to call
  /// while another thread still uses it.
  void shutdown() const;

 private:
  int fd_ = -1;
  std::unique_ptr<SocketSeal> seal_;
};

/// The system's words for an errno (thread-safe, unlike strerror).
std::string errnoText(int err);

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

/// One connection attempt, for a listener known to be up: a refusal is an error at once.
Result<Socket> connectOnce(const sockaddr_storage& addr, const Deadline& deadline);

}  // namespace braid::sockets
