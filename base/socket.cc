// The owning socket and how connections are made: see socket.h. Every socket made here is
// non-blocking; every wait is a poll() bounded by a Deadline.
#include "base/socket.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <system_error>
#include <thread>

#include "base/log.h"
#include "base/socket_address.h"

namespace braid::sockets {
namespace {

bool isRetryableConnectError(int err) {
  switch (err) {
    case ECONNREFUSED:
    case ETIMEDOUT:
    case ENETUNREACH:
    case EHOSTUNREACH:
    case ECONNRESET:
    case ECONNABORTED:
    case EAGAIN:
    case EADDRNOTAVAIL:
    case EINTR:
      return true;
    default:
      return false;
  }
}

/// One non-blocking connect attempt, waited for until the deadline. 0 or an errno.
int tryConnect(const Socket& socket, const sockaddr_storage& addr, const Deadline& deadline) {
  if (::connect(socket.fd(), reinterpret_cast<const sockaddr*>(&addr), addressLength(addr)) == 0) {
    return 0;
  }
  if (errno != EINPROGRESS && errno != EINTR) return errno;
  pollfd pfd = {socket.fd(), POLLOUT, 0};
  while (true) {
    int rc = ::poll(&pfd, 1, deadline.pollMs());
    if (rc > 0) break;
    if (rc < 0 && errno != EINTR) return errno;
    if (rc == 0 && deadline.expired()) return deadline.cancelled() ? ECANCELED : ETIMEDOUT;
  }
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(socket.fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

}  // namespace

std::string errnoText(int err) { return std::generic_category().message(err); }

void tuneConnection(int fd) {
  const int one = 1;
  // Bootstrap messages are tiny and latency-bound (barrier is one byte).
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  // Liveness (socket.h). Best effort: a kernel without one of these still connects.
  const int userTimeout = Liveness::kUserTimeoutMs;
  const int idle = Liveness::kKeepIdleS;
  const int interval = Liveness::kKeepIntervalS;
  const int count = Liveness::kKeepCount;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &userTimeout, sizeof(userTimeout));
  (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    other.fd_ = -1;
    seal_ = std::move(other.seal_);
  }
  return *this;
}

int Socket::release() {
  int fd = fd_;
  fd_ = -1;
  seal_.reset();
  return fd;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  seal_.reset();
}

void Socket::shutdown() const {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}
Result<Socket> listenOn(const sockaddr_storage& addr, bool reuseAddr) {
  Socket socket(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!socket.valid()) return systemError("socket(): " + errnoText(errno));
  if (reuseAddr) {
    int one = 1;
    if (setsockopt(socket.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
      return systemError("setsockopt(SO_REUSEADDR): " + errnoText(errno));
    }
  }
  if (::bind(socket.fd(), reinterpret_cast<const sockaddr*>(&addr), addressLength(addr)) != 0) {
    return systemError("cannot bind to " + addressToString(addr) + ": " + errnoText(errno));
  }
  if (::listen(socket.fd(), SOMAXCONN) != 0) {
    return systemError("cannot listen on " + addressToString(addr) + ": " + errnoText(errno));
  }
  return socket;
}

Result<sockaddr_storage> boundAddress(const Socket& socket) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return systemError("getsockname(): " + errnoText(errno));
  }
  return addr;
}
Result<Socket> connectWithRetry(const sockaddr_storage& addr, const Deadline& deadline,
                                const sockaddr_storage* from) {
  auto start = std::chrono::steady_clock::now();
  bool warned = false;
  int backoffMs = 1;
  while (true) {
    Socket socket(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!socket.valid()) return systemError("socket(): " + errnoText(errno));
    if (from != nullptr) {
      // The interface the connection leaves by: its address, any port.
      sockaddr_storage local = *from;
      setPort(local, 0);
      if (::bind(socket.fd(), reinterpret_cast<const sockaddr*>(&local), addressLength(local)) !=
          0) {
        return systemError("cannot bind to " + addressToString(local) + " to connect to " +
                           addressToString(addr) + ": " + errnoText(errno));
      }
    }
    int err = tryConnect(socket, addr, deadline);
    if (err == 0) {
      tuneConnection(socket.fd());
      return socket;
    }
    if (deadline.cancelled()) {
      return remoteError("gave up connecting to " + addressToString(addr) +
                         ": cancelled (the communicator was aborted, or a peer was lost)");
    }
    if (!isRetryableConnectError(err)) {
      return systemError("cannot connect to " + addressToString(addr) + ": " + errnoText(err));
    }
    if (deadline.expired()) {
      return remoteError("timed out connecting to " + addressToString(addr) +
                         " (last error: " + errnoText(err) + ")");
    }
    if (!warned && std::chrono::steady_clock::now() - start > std::chrono::seconds(10)) {
      BRAID_WARN("still trying to connect to %s (%s)", addressToString(addr).c_str(),
                 errnoText(err).c_str());
      warned = true;
    }
    int64_t sleepMs = std::min<int64_t>(backoffMs, deadline.remainingMs());
    std::this_thread::sleep_for(std::chrono::milliseconds(sleepMs));
    backoffMs = std::min(backoffMs * 2, 100);
  }
}

Result<Socket> connectOnce(const sockaddr_storage& addr, const Deadline& deadline) {
  Socket socket(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!socket.valid()) return systemError("socket(): " + errnoText(errno));
  const int err = tryConnect(socket, addr, deadline);
  if (err != 0) {
    return remoteError("cannot connect to " + addressToString(addr) + ": " + errnoText(err));
  }
  tuneConnection(socket.fd());
  return socket;
}
}  // namespace braid::sockets
