// Transfers bounded by a Deadline: see socket_io.h. Every transfer is a loop of MSG_DONTWAIT
// calls and poll()s on the (non-blocking) socket, one or two directions at once.
#include "base/socket_io.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>

namespace braid::sockets {
namespace {

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
  // The connection's seal (socket_seal.h): every byte goes through it. Null: plaintext.
  SocketSeal* seal = nullptr;
};

/// A transfer of `socket`'s, through its seal where it has one.
Transfer on(const Socket& socket, const char* out, char* in, size_t bytes, bool sending) {
  Transfer t{socket.fd(), out, in, bytes, sending};
  t.seal = socket.seal();
  return t;
}

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
  if (t.seal != nullptr) return t.seal->send(t.fd, t.out, t.left, t.then, t.thenLeft);
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
    ssize_t n = t.sending ? sendSome(t)
                : t.seal  ? t.seal->recv(t.fd, t.in, t.left)
                          : ::recv(t.fd, t.in, t.left, MSG_DONTWAIT);
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
    result->end = isPeerGone(errno)                      ? IoEnd::kPeerClosed
                  : errno == kUnauthenticErrno && t.seal ? IoEnd::kUnauthentic
                                                         : IoEnd::kFailed;
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
      // arrive, since the sender sends all of what is left. On a sealed connection, the rest of
      // the frame arriving (part of what is left may already sit in the seal).
      if (t.wakeAfter > 0 && t.seal == nullptr)
        setLowWater(t, t.left >= t.wakeAfter ? static_cast<int>(t.wakeAfter) : 1);
      if (t.wakeAfter > 0 && t.seal != nullptr)
        setLowWater(t, static_cast<int>(std::min(t.seal->bytesToFrameEnd(), t.wakeAfter)));
    }
    int rc = ::poll(fds, nfds, deadline.pollMs());
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

}  // namespace

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
    case IoEnd::kUnauthentic:
      return "a frame from the peer failed authentication (altered, replayed or sealed with "
             "another key): the connection is no longer trusted";
    case IoEnd::kWrongKey:
      return "the encryption handshake" + (where.empty() ? std::string() : " on " + where) +
             " failed: the peer's key differs from this process's (ncclSetEncryption), or the "
             "peer does not encrypt";
  }
  return "unknown";
}
IoResult sendAll(const Socket& socket, const void* data, size_t bytes, const Deadline& deadline) {
  Transfer t = on(socket, static_cast<const char*>(data), nullptr, bytes, true);
  return runTransfers(&t, 1, deadline);
}

IoResult recvAll(const Socket& socket, void* data, size_t bytes, const Deadline& deadline) {
  Transfer t = on(socket, nullptr, static_cast<char*>(data), bytes, false);
  return runTransfers(&t, 1, deadline);
}

IoResult recvBulk(const Socket& socket, void* data, size_t bytes, const Deadline& deadline) {
  Transfer t = on(socket, nullptr, static_cast<char*>(data), bytes, false);
  t.wakeAfter = kBulkWakeBytes;
  IoResult io = runTransfers(&t, 1, deadline);
  // The next read on the socket (a slot's 8-byte word) must wake at its first byte.
  setLowWater(t, 1);
  return io;
}

IoResult sendAllv(const Socket& socket, const void* head, size_t headBytes, const void* data,
                  size_t bytes, const Deadline& deadline) {
  Transfer t = on(socket, static_cast<const char*>(head), nullptr, headBytes, true);
  t.then = static_cast<const char*>(data);
  t.thenLeft = bytes;
  if (t.left == 0) advanceSend(t, 0);
  return runTransfers(&t, 1, deadline);
}

IoResult exchange(const Socket& to, const void* sendData, size_t sendBytes, const Socket& from,
                  void* recvData, size_t recvBytes, const Deadline& deadline) {
  Transfer t[2] = {on(to, static_cast<const char*>(sendData), nullptr, sendBytes, true),
                   on(from, nullptr, static_cast<char*>(recvData), recvBytes, false)};
  return runTransfers(t, 2, deadline);
}

bool sendWhatFits(const Socket& socket, const void* data, size_t bytes, size_t* sent) {
  Transfer t = on(socket, static_cast<const char*>(data), nullptr, bytes, true);
  IoResult ignored;
  const bool alive = pump(t, &ignored);
  *sent = bytes - t.left;
  return alive;
}

bool recvArrived(const Socket& socket, void* data, size_t bytes, size_t* received) {
  Transfer t = on(socket, nullptr, static_cast<char*>(data), bytes, false);
  IoResult ignored;
  const bool alive = pump(t, &ignored);
  *received = bytes - t.left;
  return alive;
}

}  // namespace braid::sockets
