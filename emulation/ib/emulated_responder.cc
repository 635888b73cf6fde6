// The responder thread of one emulated QP's connection: see emulated_responder.h.
#include "emulation/ib/emulated_responder.h"
#include "base/socket_io.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "base/log.h"
#include "emulation/ib/emulated_hca.h"
#include "emulation/ib/emulated_qp.h"

namespace braid::transport::ib::emulated {
namespace {

/// The payload is read in pieces of this size, so that a header that announces a large write
/// costs memory only as its bytes actually arrive.
constexpr size_t kReadPiece = size_t{4} << 20;
/// A payload buffer larger than this is given back after the write that needed it.
constexpr size_t kKeepPayloadBytes = size_t{64} << 20;
/// How long an answer may take to leave before the requester counts as gone.
constexpr int64_t kSendTimeoutMs = 10000;
/// How long a closing connection waits for the requester to close its side.
constexpr int64_t kDrainMs = 250;

}  // namespace

bool sendHelloReply(const ::braid::sockets::Socket& connection, wire::HelloVerdict verdict) {
  auto reply = wire::encodeHelloReply(verdict);
  return ::braid::sockets::sendAll(connection, reply.data(), reply.size(), Deadline::afterMs(100))
      .ok();
}

ResponderLink::ResponderLink(QueuePair& qp, ::braid::sockets::Socket connection,
                             const wire::Hello& hello, uint64_t epoch)
    : qp_(qp),
      socket_(std::move(connection)),
      hello_(hello),
      epoch_(epoch),
      wakeFd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      thread_([this] { run(); }) {}

ResponderLink::~ResponderLink() {
  stop();
  thread_.join();
  if (wakeFd_ >= 0) ::close(wakeFd_);
}

void ResponderLink::stop() {
  stopping_ = true;
  uint64_t one = 1;
  if (wakeFd_ >= 0) (void)!::write(wakeFd_, &one, sizeof(one));  // a waiting read or send returns
}

void ResponderLink::run() {
  while (!stopping_ && serveOne()) {
  }
  closeGracefully();  // the requester sees the connection end, which it treats as silence
  finished_ = true;
}

bool ResponderLink::serveOne() {
  uint8_t headerBytes[wire::kRequestHeaderBytes];
  if (!readFully(headerBytes, sizeof(headerBytes))) return false;  // closed, or stopped
  Result<wire::RequestHeader> decoded = wire::decodeRequest(headerBytes);
  if (!decoded.ok()) {
    qp_.failFromResponder(epoch_, "QP " + std::to_string(hello_.srcQpNum) + " sent " +
                                      decoded.status().message() + "; connection closed");
    return false;
  }
  const wire::RequestHeader& request = decoded.value();
  if (request.opcode == wire::Opcode::kRdmaRead) return serveRead(request);
  if (!receivePayload(request.length) || stopping_) return false;

  QueuePair::WriteGate gate = qp_.writeGate(epoch_);
  if (!gate.live) return false;  // the QP left RTR/RTS: its packets are dropped, in silence
  Hca& hca = qp_.hca();
  const char* violation =
      gate.remoteWrite
          ? hca.checkRemoteWrite(qp_.pd(), request.rkey, request.remoteAddr, request.length)
          : "the QP does not allow remote writes (qp_access_flags)";
  bool withImm = request.opcode == wire::Opcode::kRdmaWriteWithImm;
  if (violation == nullptr && withImm) {
    QueuePair::ReceiveWait wait = qp_.awaitReceive(
        epoch_, hello_.rnrRetry, stopping_,
        [this](uint32_t micros) { return respond(wire::ResponseKind::kRnrWait, micros); });
    if (wait == QueuePair::ReceiveWait::kGone) return false;
    if (wait == QueuePair::ReceiveWait::kGaveUp) {
      (void)respond(wire::ResponseKind::kNakRnr);
      return false;
    }
  }
  // Checked again with the copy, under the region lock: the region may be gone by now.
  if (violation == nullptr) {
    violation = hca.writeRemote(qp_.pd(), request.rkey, request.remoteAddr, payload_.data(),
                                request.length);
  }
  if (violation != nullptr) {
    (void)respond(wire::ResponseKind::kNakRemoteAccess);
    qp_.failFromResponder(epoch_, std::string("refused a write from QP ") +
                                      std::to_string(hello_.srcQpNum) + ": " + violation);
    return false;
  }
  if (withImm && !qp_.completeReceive(epoch_, request.length, request.immData, hello_.srcQpNum)) {
    return false;  // the QP was moved to ERR or RESET meanwhile
  }
  return respond(wire::ResponseKind::kAck);
}

bool ResponderLink::serveRead(const wire::RequestHeader& request) {
  QueuePair::WriteGate gate = qp_.writeGate(epoch_);
  if (!gate.live) return false;  // the QP left RTR/RTS: its packets are dropped, in silence
  std::vector<uint8_t> data(static_cast<size_t>(request.length));
  const char* violation = gate.remoteRead
                              ? qp_.hca().readRemote(qp_.pd(), request.rkey, request.remoteAddr,
                                                     request.length, data.data())
                              : "the QP does not allow remote reads (qp_access_flags)";
  if (violation != nullptr) {
    (void)respond(wire::ResponseKind::kNakRemoteAccess);
    qp_.failFromResponder(epoch_, std::string("refused a read from QP ") +
                                      std::to_string(hello_.srcQpNum) + ": " + violation);
    return false;
  }
  return respond(wire::ResponseKind::kReadData, static_cast<uint32_t>(request.length)) &&
         writeFully(data.data(), data.size());
}

bool ResponderLink::receivePayload(uint64_t length) {
  if (payload_.capacity() > kKeepPayloadBytes && length <= kKeepPayloadBytes) {
    payload_ = std::vector<uint8_t>();
  }
  size_t have = 0;
  while (have < length) {
    size_t piece = static_cast<size_t>(std::min<uint64_t>(kReadPiece, length - have));
    if (payload_.size() < have + piece) payload_.resize(have + piece);
    if (!readFully(payload_.data() + have, piece)) return false;
    have += piece;
  }
  return true;
}

bool ResponderLink::respond(wire::ResponseKind kind, uint32_t value) {
  auto bytes = wire::encodeResponse(wire::Response{kind, value});
  return writeFully(bytes.data(), bytes.size());
}

bool ResponderLink::waitSocket(short events, const Deadline& deadline) {
  pollfd fds[2] = {{socket_.fd(), events, 0}, {wakeFd_, POLLIN, 0}};
  while (!stopping_ && !deadline.expired()) {
    // Without an eventfd (none could be made), stopping_ is looked at every 100 ms.
    int timeoutMs = static_cast<int>(deadline.remainingMs(wakeFd_ >= 0 ? INT32_MAX : 100));
    if (deadline.isNever() && wakeFd_ >= 0) timeoutMs = -1;
    int rc = ::poll(fds, 2, timeoutMs);  // poll ignores a negative fd
    if (rc < 0 && errno != EINTR) return false;
    if (rc > 0 && fds[0].revents != 0) return true;  // ready, or an error the caller will see
  }
  return false;
}

bool ResponderLink::readFully(void* data, size_t bytes) {
  auto* p = static_cast<uint8_t*>(data);
  while (bytes > 0) {
    ssize_t n = ::recv(socket_.fd(), p, bytes, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      return false;
    } else if (errno != EINTR && !waitSocket(POLLIN, Deadline::never())) {
      return false;
    }
  }
  return true;
}

bool ResponderLink::writeFully(const void* data, size_t bytes) {
  auto* p = static_cast<const uint8_t*>(data);
  Deadline deadline = Deadline::afterMs(kSendTimeoutMs);
  while (bytes > 0) {
    ssize_t n = ::send(socket_.fd(), p, bytes, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      return false;
    } else if (errno != EINTR && !waitSocket(POLLOUT, deadline)) {
      return false;
    }
  }
  return true;
}

void ResponderLink::closeGracefully() {
  ::shutdown(socket_.fd(), SHUT_WR);
  Deadline deadline = Deadline::afterMs(kDrainMs);
  uint8_t sink[4096];
  while (!deadline.expired()) {
    ssize_t n = ::recv(socket_.fd(), sink, sizeof(sink), MSG_DONTWAIT);
    if (n > 0 || (n < 0 && errno == EINTR)) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) break;  // the requester closed
    pollfd pfd = {socket_.fd(), POLLIN, 0};
    (void)::poll(&pfd, 1, static_cast<int>(deadline.remainingMs()));
  }
  socket_.close();
}

}  // namespace braid::transport::ib::emulated
