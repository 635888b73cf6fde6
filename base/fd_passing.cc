// Passing file descriptors between the processes of one host: see fd_passing.h.
#include "base/fd_passing.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>

namespace braid::sockets {
namespace {

std::atomic<uint64_t> nextListener{0};

/// The abstract address of `name`: a NUL, then the name, unterminated.
socklen_t abstractAddress(const std::string& name, sockaddr_un* addr) {
  memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  const size_t n = std::min(name.size(), sizeof(addr->sun_path) - 1);
  memcpy(addr->sun_path + 1, name.data(), n);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

Status sysFailure(const std::string& what, int err) {
  return systemError("fd passing: " + what + ": " + errnoText(err));
}

/// Waits until `fd` is readable (or hung up), within the deadline.
Status waitReadable(int fd, const Deadline& deadline, const char* what) {
  while (true) {
    if (deadline.expired()) {
      return remoteError(std::string("fd passing: timed out waiting to ") + what +
                         " (BRAID_TIMEOUT_MS); the peer process may have failed or gone");
    }
    pollfd p{fd, POLLIN, 0};
    const int n = poll(&p, 1, static_cast<int>(deadline.remainingMs(1000)));
    if (n > 0) return Status::success();
    if (n < 0 && errno != EINTR) return sysFailure(std::string("poll to ") + what, errno);
  }
}

/// One message of a word and room for one descriptor beside it.
struct FdMessage {
  explicit FdMessage(uint64_t* word) : iov{word, sizeof(*word)} {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;

  iovec iov;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
};

}  // namespace

Result<FdListener> FdListener::open(int backlog) {
  Socket s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return sysFailure("socket", errno);
  const std::string name =
      "braid-fd-" + std::to_string(getpid()) + "-" + std::to_string(nextListener.fetch_add(1));
  sockaddr_un addr;
  const socklen_t len = abstractAddress(name, &addr);
  if (bind(s.fd(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    return sysFailure("bind " + name, errno);
  }
  if (listen(s.fd(), std::max(backlog, 1)) != 0) return sysFailure("listen", errno);
  return FdListener(std::move(s), name);
}

Result<Socket> FdListener::accept(const Deadline& deadline) const {
  BRAID_TRY(waitReadable(socket_.fd(), deadline, "accept a peer process's connection"));
  Socket s(::accept4(socket_.fd(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!s.valid()) return sysFailure("accept", errno);
  return s;
}

Result<Socket> connectFdListener(const std::string& name) {
  Socket s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return sysFailure("socket", errno);
  sockaddr_un addr;
  const socklen_t len = abstractAddress(name, &addr);
  if (::connect(s.fd(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    return sysFailure("connect to " + name, errno);
  }
  return s;
}

Status sendFd(const Socket& socket, int fd, uint64_t word) {
  FdMessage m(&word);
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  while (true) {
    const ssize_t n = sendmsg(socket.fd(), &m.msg, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(sizeof(word))) return Status::success();
    if (n < 0 && errno == EINTR) continue;
    return sysFailure("sendmsg of a descriptor", n < 0 ? errno : EIO);
  }
}

Result<ReceivedFd> recvFd(const Socket& socket, const Deadline& deadline) {
  BRAID_TRY(waitReadable(socket.fd(), deadline, "receive a descriptor from a peer process"));
  ReceivedFd out;
  FdMessage m(&out.word);
  ssize_t n;
  do {
    n = recvmsg(socket.fd(), &m.msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return sysFailure("recvmsg of a descriptor", errno);
  const cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  if (n != static_cast<ssize_t>(sizeof(out.word)) || c == nullptr || c->cmsg_type != SCM_RIGHTS ||
      c->cmsg_len != CMSG_LEN(sizeof(int))) {
    return systemError("fd passing: the peer process closed the connection or sent no descriptor");
  }
  memcpy(&out.fd, CMSG_DATA(c), sizeof(int));
  return out;
}

}  // namespace braid::sockets
