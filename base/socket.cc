// TCP helpers: see socket.h. All sockets made here are non-blocking; every
// transfer is a loop of MSG_DONTWAIT calls and poll()s bounded by a Deadline.
#include "base/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <system_error>
#include <thread>

#include "base/hmac.h"
#include "base/host_port.h"
#include "base/ifname_filter.h"
#include "base/log.h"

namespace braid::sockets {
namespace {

std::string errnoText(int err) { return std::generic_category().message(err); }

/// poll()'s timeout argument for a deadline: -1 when there is none.
int pollTimeoutMs(const Deadline& deadline) { return deadline.pollMs(); }

bool isPeerGone(int err) { return err == EPIPE || err == ECONNRESET; }

/// One direction of a transfer in progress.
struct Transfer {
  int fd;
  const char* out;  // sending: what is left to send
  char* in;         // receiving: where the rest goes
  size_t left;
  bool sending;
  // Sending: a second part that follows `out` at once, sent with it by one sendmsg.
  const char* then = nullptr;
  size_t thenLeft = 0;
  // Receiving: poll waits until this many bytes (or all that is left) have arrived; 0: any.
  size_t wakeAfter = 0;
  int lowWater = 1;  // the socket's SO_RCVLOWAT as this transfer left it (1: the default)
};

/// Sets the socket's receive low-water mark: poll says it is readable once that many bytes
/// have arrived (or the peer has closed). Best effort: without it, poll wakes at every segment.
void setLowWater(Transfer& t, int bytes) {
  if (bytes == t.lowWater) return;
  if (setsockopt(t.fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof(bytes)) == 0) t.lowWater = bytes;
}

/// Moves the send side of `t` on by `n` bytes taken from its two parts.
void advanceSend(Transfer& t, size_t n) {
  const size_t first = std::min(n, t.left);
  t.out += first;
  t.left -= first;
  n -= first;
  if (t.left == 0 && t.thenLeft > 0) {
    t.out = t.then + n;
    t.left = t.thenLeft - n;
    t.then = nullptr;
    t.thenLeft = 0;
  }
}

/// One non-blocking send of what is left of `t`: both parts in one sendmsg where it has two.
ssize_t sendSome(const Transfer& t) {
  const int flags = MSG_DONTWAIT | MSG_NOSIGNAL;
  if (t.thenLeft == 0) return ::send(t.fd, t.out, t.left, flags);
  iovec parts[2] = {{const_cast<char*>(t.out), t.left}, {const_cast<char*>(t.then), t.thenLeft}};
  msghdr msg{};
  msg.msg_iov = parts;
  msg.msg_iovlen = 2;
  return ::sendmsg(t.fd, &msg, flags);
}

/// Moves as much as the socket takes or gives now. Returns false when the
/// transfer cannot go on (*result says why); true when it finished or would
/// block.
bool pump(Transfer& t, IoResult* result) {
  while (t.left > 0) {
    ssize_t n = t.sending ? sendSome(t) : ::recv(t.fd, t.in, t.left, MSG_DONTWAIT);
    if (n > 0) {
      if (t.sending) {
        advanceSend(t, static_cast<size_t>(n));
      } else {
        t.left -= static_cast<size_t>(n);
        t.in += n;
      }
      continue;
    }
    if (n == 0) {
      if (t.sending) return true;  // nothing taken; poll will tell us when
      result->end = IoEnd::kPeerClosed;
      result->onSend = false;
      return false;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    result->end = isPeerGone(errno) ? IoEnd::kPeerClosed : IoEnd::kFailed;
    result->sysErrno = errno;
    result->onSend = t.sending;
    return false;
  }
  return true;
}

/// Drives up to two transfers to completion or to the deadline.
IoResult runTransfers(Transfer* transfers, int count, const Deadline& deadline) {
  IoResult result;
  while (true) {
    pollfd fds[2];
    Transfer* waiting[2];
    int nfds = 0;
    for (int i = 0; i < count; ++i) {
      Transfer& t = transfers[i];
      if (!pump(t, &result)) return result;
      if (t.left == 0) continue;
      fds[nfds] = {t.fd, static_cast<short>(t.sending ? POLLOUT : POLLIN), 0};
      waiting[nfds++] = &t;
    }
    if (nfds == 0) return result;
    for (int i = 0; i < nfds; ++i) {
      Transfer& t = *waiting[i];
      // Only while a bulk's worth is still to come: the mark never asks for more than will
      // arrive, since the sender sends all of what is left.
      if (t.wakeAfter > 0)
        setLowWater(t, t.left >= t.wakeAfter ? static_cast<int>(t.wakeAfter) : 1);
    }
    int rc = ::poll(fds, nfds, pollTimeoutMs(deadline));
    if (rc < 0 && errno != EINTR) {
      result.end = IoEnd::kFailed;
      result.sysErrno = errno;
      return result;
    }
    if (rc == 0 && deadline.expired()) {
      // Blame the receive side when both are stuck: a ring waits on its predecessor.
      result.end = deadline.cancelled() ? IoEnd::kCancelled : IoEnd::kTimedOut;
      result.onSend = true;
      for (int i = 0; i < nfds; ++i) {
        if (!waiting[i]->sending) result.onSend = false;
      }
      return result;
    }
  }
}

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
    int rc = ::poll(&pfd, 1, pollTimeoutMs(deadline));
    if (rc > 0) break;
    if (rc < 0 && errno != EINTR) return errno;
    if (rc == 0 && deadline.expired()) return deadline.cancelled() ? ECANCELED : ETIMEDOUT;
  }
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(socket.fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

bool isLinkLocalV6(const sockaddr* sa) {
  const auto* a6 = reinterpret_cast<const sockaddr_in6*>(sa);
  return IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr);
}

/// The first usable interface address of `family` that passes `filter`.
std::optional<sockaddr_storage> findInterface(const ifaddrs* list, int family,
                                              const InterfaceFilter& filter, bool allowLoopback) {
  for (const ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || ifa->ifa_addr->sa_family != family) continue;
    if ((ifa->ifa_flags & IFF_UP) == 0) continue;
    if ((ifa->ifa_flags & IFF_LOOPBACK) != 0 && !allowLoopback) continue;
    if (family == AF_INET6 && isLinkLocalV6(ifa->ifa_addr)) continue;
    if (!filter.matches(ifa->ifa_name)) continue;
    sockaddr_storage addr{};
    memcpy(&addr, ifa->ifa_addr, family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    BRAID_INFO("bootstrap network: interface %s, address %s", ifa->ifa_name,
               addressToString(addr).c_str());
    return addr;
  }
  return std::nullopt;
}

sockaddr_storage loopbackV4() {
  sockaddr_storage addr{};
  auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
  a4->sin_family = AF_INET;
  a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

}  // namespace

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
    fd_ = other.release();
  }
  return *this;
}

int Socket::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Socket::shutdown() const {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

std::string IoResult::describe() const {
  switch (end) {
    case IoEnd::kDone:
      return "done";
    case IoEnd::kTimedOut:
      return "timed out";
    case IoEnd::kCancelled:
      return "cancelled (the communicator was aborted, or a peer was lost)";
    case IoEnd::kPeerClosed:
      // An orderly close has no errno; a reset or a broken pipe says which it was.
      return sysErrno == 0 ? "peer closed the connection"
                           : "peer closed the connection (" + errnoText(sysErrno) + ")";
    case IoEnd::kFailed:
      return errnoText(sysErrno);
  }
  return "unknown";
}

std::string addressToString(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* a4 = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a4->sin_addr, text, sizeof(text));
    return std::string(text) + ":" + std::to_string(ntohs(a4->sin_port));
  }
  if (addr.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a6->sin6_addr, text, sizeof(text));
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(a6->sin6_port));
  }
  return "<unspecified>";
}

namespace {

/// Whether two addresses are the same host address, whatever their ports.
bool sameHost(const sockaddr_storage& a, const sockaddr* b) {
  if (a.ss_family != b->sa_family) return false;
  if (a.ss_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(b)->sin_addr.s_addr;
  }
  if (a.ss_family == AF_INET6) {
    return memcmp(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr,
                  &reinterpret_cast<const sockaddr_in6*>(b)->sin6_addr, sizeof(in6_addr)) == 0;
  }
  return false;
}

}  // namespace

ConnectionEnds connectionEnds(const Socket& socket) {
  ConnectionEnds ends;
  socklen_t len = sizeof(ends.local);
  if (getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&ends.local), &len) != 0) {
    ends.local = {};
  }
  len = sizeof(ends.remote);
  if (getpeername(socket.fd(), reinterpret_cast<sockaddr*>(&ends.remote), &len) != 0) {
    ends.remote = {};
  }
  return ends;
}

std::string interfaceOf(const sockaddr_storage& addr) {
  ifaddrs* list = nullptr;
  if (addr.ss_family == AF_UNSPEC || getifaddrs(&list) != 0) return "";
  std::string name;
  for (const ifaddrs* ifa = list; ifa != nullptr && name.empty(); ifa = ifa->ifa_next) {
    if (ifa->ifa_addr != nullptr && sameHost(addr, ifa->ifa_addr)) name = ifa->ifa_name;
  }
  freeifaddrs(list);
  return name;
}

std::string describe(const ConnectionEnds& ends) {
  const std::string nic = interfaceOf(ends.local);
  return addressToString(ends.local) + (nic.empty() ? "" : " (" + nic + ")") + " -> " +
         addressToString(ends.remote);
}

socklen_t addressLength(const sockaddr_storage& addr) {
  return addr.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

bool isLoopback(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET) {
    const auto* a4 = reinterpret_cast<const sockaddr_in*>(&addr);
    return (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
  }
  if (addr.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    if (IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr)) return true;
    return IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr) && a6->sin6_addr.s6_addr[12] == 127;
  }
  return false;
}

Result<sockaddr_storage> resolveHostPort(const std::string& hostPort) {
  BRAID_ASSIGN_OR_RETURN(const HostPort parts, splitHostPort(hostPort));
  const std::string& host = parts.host;
  const uint16_t portNumber = parts.port;

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    return invalidArgument("cannot resolve '" + host + "': " + gai_strerror(rc));
  }
  const addrinfo* pick = nullptr;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_family == AF_INET && pick == nullptr) pick = ai;
  }
  for (const addrinfo* ai = found; ai != nullptr && pick == nullptr; ai = ai->ai_next) {
    if (ai->ai_family == AF_INET6) pick = ai;
  }
  sockaddr_storage addr{};
  if (pick != nullptr) memcpy(&addr, pick->ai_addr, pick->ai_addrlen);
  freeaddrinfo(found);
  if (pick == nullptr) return invalidArgument("'" + host + "' has no IPv4 or IPv6 address");
  setPort(addr, portNumber);
  return addr;
}

sockaddr_storage pickLocalAddress(const std::optional<std::string>& ifnameFilter) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    BRAID_WARN("getifaddrs failed (%s); using 127.0.0.1", errnoText(errno).c_str());
    return loopbackV4();
  }
  // Without a filter, skip container bridges and loopback as NCCL does.
  InterfaceFilter filter(ifnameFilter.value_or("^docker,lo"));
  bool allowLoopback = ifnameFilter.has_value() && !filter.exclude();
  std::optional<sockaddr_storage> found = findInterface(list, AF_INET, filter, allowLoopback);
  if (!found && ifnameFilter) found = findInterface(list, AF_INET6, filter, allowLoopback);
  freeifaddrs(list);
  if (found) return *found;
  if (ifnameFilter) {
    BRAID_WARN("no interface that is up matches SOCKET_IFNAME='%s'; using 127.0.0.1",
               ifnameFilter->c_str());
  } else {
    BRAID_INFO("bootstrap network: no non-loopback IPv4 interface; using 127.0.0.1");
  }
  return loopbackV4();
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

void setPort(sockaddr_storage& addr, uint16_t port) {
  if (addr.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&addr)->sin_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = htons(port);
  }
}

uint16_t portOf(const sockaddr_storage& addr) {
  return ntohs(addr.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in*>(&addr)->sin_port
                                         : reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
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

IoResult sendAll(const Socket& socket, const void* data, size_t bytes, const Deadline& deadline) {
  Transfer t{socket.fd(), static_cast<const char*>(data), nullptr, bytes, true};
  return runTransfers(&t, 1, deadline);
}

IoResult recvAll(const Socket& socket, void* data, size_t bytes, const Deadline& deadline) {
  Transfer t{socket.fd(), nullptr, static_cast<char*>(data), bytes, false};
  return runTransfers(&t, 1, deadline);
}

IoResult recvBulk(const Socket& socket, void* data, size_t bytes, const Deadline& deadline) {
  Transfer t{socket.fd(), nullptr, static_cast<char*>(data), bytes, false};
  t.wakeAfter = kBulkWakeBytes;
  IoResult io = runTransfers(&t, 1, deadline);
  // The next read on the socket (a slot's 8-byte word) must wake at its first byte.
  setLowWater(t, 1);
  return io;
}

IoResult sendAllv(const Socket& socket, const void* head, size_t headBytes, const void* data,
                  size_t bytes, const Deadline& deadline) {
  Transfer t{socket.fd(), static_cast<const char*>(head), nullptr, headBytes, true};
  t.then = static_cast<const char*>(data);
  t.thenLeft = bytes;
  if (t.left == 0) advanceSend(t, 0);
  return runTransfers(&t, 1, deadline);
}

IoResult exchange(const Socket& to, const void* sendData, size_t sendBytes, const Socket& from,
                  void* recvData, size_t recvBytes, const Deadline& deadline) {
  Transfer t[2] = {{to.fd(), static_cast<const char*>(sendData), nullptr, sendBytes, true},
                   {from.fd(), nullptr, static_cast<char*>(recvData), recvBytes, false}};
  return runTransfers(t, 2, deadline);
}

Challenge newChallenge() {
  static thread_local std::random_device device;  // getrandom(2) on Linux
  Challenge c;
  for (size_t i = 0; i < c.size(); i += sizeof(uint32_t)) {
    const uint32_t word = device();
    memcpy(c.data() + i, &word, sizeof(word));
  }
  return c;
}

ProofTag proofTag(const Proof& proof, const Challenge& challenge, const void* greeting,
                  size_t bytes) {
  uint8_t head[4 + kChallengeBytes];
  memcpy(head, &proof.purpose, 4);
  memcpy(head + 4, challenge.data(), kChallengeBytes);
  const crypto::Digest d = crypto::hmacSha256(proof.secret.data(), proof.secret.size(), head,
                                              sizeof(head), greeting, bytes);
  ProofTag tag;
  memcpy(tag.data(), d.data(), tag.size());
  return tag;
}

IoResult sendProvenGreeting(const Socket& socket, const Proof& proof, const void* greeting,
                            size_t bytes, const Deadline& deadline) {
  Challenge challenge;
  IoResult io = recvAll(socket, challenge.data(), challenge.size(), deadline);
  if (!io.ok()) return io;
  std::vector<char> message(bytes + kProofTagBytes);
  memcpy(message.data(), greeting, bytes);
  const ProofTag tag = proofTag(proof, challenge, greeting, bytes);
  memcpy(message.data() + bytes, tag.data(), tag.size());
  return sendAll(socket, message.data(), message.size(), deadline);
}

bool GreetingAcceptor::acceptPending() {
  while (true) {
    int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      tuneConnection(fd);
      Pending p{Socket(fd),
                std::vector<char>(greetingBytes_ + (proof_ ? kProofTagBytes : 0)),
                0,
                {},
                std::chrono::steady_clock::now()};
      if (proof_) {
        p.challenge = newChallenge();
        // A new connection's send buffer is empty: the challenge goes at once, or not at all.
        const ssize_t sent =
            ::send(fd, p.challenge.data(), p.challenge.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        if (sent != static_cast<ssize_t>(p.challenge.size())) continue;  // closes it
      }
      if (pending_.size() >= kMaxPending) pending_.erase(pending_.begin());
      pending_.push_back(std::move(p));
      continue;
    }
    switch (errno) {
      case EAGAIN:
        return true;
      case EINTR:
      case ECONNABORTED:
      case EPROTO:
        continue;
      case EMFILE:
      case ENFILE:
      case ENOBUFS:
      case ENOMEM:
        // Out of descriptors or memory: let existing clients finish, then retry.
        BRAID_WARN("accept on the bootstrap listener: %s", errnoText(errno).c_str());
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return true;
      default:
        return false;
    }
  }
}

bool GreetingAcceptor::readPending(Pending& pending) {
  const size_t want = pending.buffer.size();
  Transfer t{pending.socket.fd(), nullptr, pending.buffer.data() + pending.received,
             want - pending.received, false};
  IoResult ignored;
  bool alive = pump(t, &ignored);
  pending.received = want - t.left;
  return !alive || t.left == 0;
}

bool GreetingAcceptor::proven(const Pending& pending) const {
  const ProofTag expected =
      proofTag(*proof_, pending.challenge, pending.buffer.data(), greetingBytes_);
  return crypto::equalInConstantTime(expected.data(), pending.buffer.data() + greetingBytes_,
                                     kProofTagBytes);
}

IoResult GreetingAcceptor::next(const Deadline& deadline, Socket* connection,
                                std::vector<char>* greeting) {
  IoResult result;
  while (true) {
    // Connections that have not finished their greeting in time hold nothing any longer.
    const auto now = std::chrono::steady_clock::now();
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                  [&](const Pending& p) {
                                    return now - p.since >
                                           std::chrono::milliseconds(kPendingTimeoutMs);
                                  }),
                   pending_.end());
    std::vector<pollfd> fds;
    fds.push_back({listener_.fd(), POLLIN, 0});
    for (const auto& p : pending_) fds.push_back({p.socket.fd(), POLLIN, 0});
    int timeoutMs = pollTimeoutMs(deadline);
    if (!pending_.empty() && (timeoutMs < 0 || timeoutMs > 1000)) timeoutMs = 1000;
    int rc = ::poll(fds.data(), fds.size(), timeoutMs);
    if (rc < 0 && errno != EINTR) {
      result.end = IoEnd::kFailed;
      result.sysErrno = errno;
      return result;
    }
    if (rc == 0 && deadline.expired()) {
      result.end = deadline.cancelled() ? IoEnd::kCancelled : IoEnd::kTimedOut;
      return result;
    }
    if (rc <= 0) continue;
    // Back to front, so erasing a finished entry keeps earlier indices valid.
    for (size_t i = pending_.size(); i-- > 0;) {
      if (fds[i + 1].revents == 0 || !readPending(pending_[i])) continue;
      Pending done = std::move(pending_[i]);
      pending_.erase(pending_.begin() + static_cast<ptrdiff_t>(i));
      if (done.received != done.buffer.size()) {
        BRAID_TRACE("a connection closed before sending its greeting");
        continue;
      }
      if (proof_ && !proven(done)) {
        ++refused_;
        BRAID_INFO("dropped a connection whose greeting does not prove the communicator's secret");
        continue;
      }
      done.buffer.resize(greetingBytes_);
      *connection = std::move(done.socket);
      *greeting = std::move(done.buffer);
      return result;
    }
    if (fds[0].revents != 0 && !acceptPending()) {
      result.end = IoEnd::kFailed;
      result.sysErrno = errno;
      return result;
    }
  }
}

}  // namespace braid::sockets
