// The requester thread of one emulated QP: see emulated_requester.h.
#include "emulation/ib/emulated_requester.h"
#include "base/socket_address.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "emulation/ib/emulated_hca.h"

namespace braid::transport::ib::emulated {
namespace {

/// How often a refused or failed connection is tried again while work waits for it.
constexpr Clock::duration kRetryInterval = std::chrono::milliseconds(1);
/// ... and at most how long between tries while no work waits.
constexpr Clock::duration kMaxIdleBackoff = std::chrono::milliseconds(50);
/// A connect or a hello unanswered for this long is abandoned and tried again.
constexpr Clock::duration kAttemptLimit = std::chrono::seconds(1);
/// The thread looks at its QP at least this often, whatever it waits for: a safety net, since
/// every change it must act on either wakes it or is a deadline it waits for. Without an
/// eventfd (none could be made) this is how soon it notices new work.
constexpr Clock::duration kMaxWait = std::chrono::seconds(1);
constexpr Clock::duration kMaxWaitWithoutEventfd = std::chrono::milliseconds(10);
/// Requests sent in one turn before answers are read again.
constexpr int kRequestsPerTurn = 64;
/// A send buffer larger than this is given back after a request that needed it.
constexpr size_t kKeepBufferBytes = size_t{64} << 20;
/// Answers read with one recv().
constexpr size_t kResponsesPerRead = 64;

static_assert(wire::kHelloReplyBytes <= wire::kResponseBytes * kResponsesPerRead,
              "the receive buffer holds the hello reply too");

bool wouldBlock(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

}  // namespace

Requester::Requester(QueuePair& qp)
    : qp_(qp),
      wakeFd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      // Room for a read's data besides the answers (kReadData and its bytes).
      rxBuffer_(wire::kResponseBytes * kResponsesPerRead + wire::kMaxReadBytes),
      thread_([this] { run(); }) {
  if (wakeFd_ < 0) {
    BRAID_WARN("emulated HCA: QP %u: no eventfd; its requester polls for work", qp.qpNum());
  }
}

Requester::~Requester() {
  stopping_ = true;
  wake();
  thread_.join();
  if (wakeFd_ >= 0) ::close(wakeFd_);
}

void Requester::wake() {
  uint64_t one = 1;
  if (wakeFd_ >= 0) (void)!::write(wakeFd_, &one, sizeof(one));
}

void Requester::run() {
  while (!stopping_) {
    QueuePair::RequesterView view = qp_.requesterView(Clock::now());
    if (view.epoch != epoch_) {
      // The QP started over (ERR, RESET, RTS again): whatever the old connection carried is
      // flushed or dropped, and a new connection starts with the new epoch.
      drop();
      epoch_ = view.epoch;
      nextAttempt_ = Clock::time_point{};
      idleBackoff_ = kRetryInterval;
    }
    turn(view);
  }
  drop();
}

void Requester::turn(const QueuePair::RequesterView& view) {
  if (!view.connect) {
    (void)waitFor(0, view.deadline);  // an unroutable path: outstanding work waits to time out
    return;
  }
  if (link_ == Link::kIdle && view.workWaiting) {
    nextAttempt_ = std::min(nextAttempt_, attemptStarted_ + kRetryInterval);
  }
  if (link_ == Link::kIdle && Clock::now() >= nextAttempt_) startAttempt(view);
  for (int i = 0; i < kRequestsPerTurn && link_ == Link::kReady; ++i) {
    if (txLength_ == 0 && !loadNextRequest()) break;
    if (!transmit()) break;
  }

  short events = 0;
  Clock::time_point until = view.deadline;
  switch (link_) {
    case Link::kIdle:
      until = std::min(until, nextAttempt_);
      break;
    case Link::kConnecting:
      events = POLLOUT;
      until = std::min(until, attemptStarted_ + kAttemptLimit);
      break;
    case Link::kGreeting:
      events = POLLIN;
      until = std::min(until, attemptStarted_ + kAttemptLimit);
      break;
    case Link::kReady:
      events = static_cast<short>(POLLIN | (txLength_ > 0 ? POLLOUT : 0));
      break;
    case Link::kSilent:
      break;
  }
  short revents = waitFor(events, until);
  bool attempting = link_ == Link::kConnecting || link_ == Link::kGreeting;
  if (revents == 0) {
    if (attempting && Clock::now() >= attemptStarted_ + kAttemptLimit) failAttempt(view);
    return;
  }
  if (link_ == Link::kConnecting) {
    finishConnect(view);
  } else if (link_ == Link::kGreeting) {
    readHelloReply(view);
  } else if (link_ == Link::kReady) {
    if (revents & (POLLIN | POLLHUP | POLLERR)) readResponses();
    if (link_ == Link::kReady && (revents & POLLOUT)) (void)transmit();
  }
}

short Requester::waitFor(short events, Clock::time_point until) {
  pollfd fds[2] = {{wakeFd_, POLLIN, 0}, {socket_.fd(), events, 0}};
  nfds_t count = events != 0 ? 2 : 1;
  Clock::duration cap = wakeFd_ >= 0 ? kMaxWait : kMaxWaitWithoutEventfd;
  Clock::duration wait = cap;
  if (until != Clock::time_point::max()) {
    wait = std::clamp<Clock::duration>(until - Clock::now(), Clock::duration::zero(), cap);
  }
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
  timespec timeout{static_cast<time_t>(nanos / 1000000000), static_cast<long>(nanos % 1000000000)};
  if (::ppoll(fds, count, &timeout, nullptr) <= 0) return 0;
  if (fds[0].revents != 0) {
    uint64_t ignored;
    (void)!::read(wakeFd_, &ignored, sizeof(ignored));
  }
  return count == 2 ? fds[1].revents : 0;
}

void Requester::startAttempt(const QueuePair::RequesterView& view) {
  attemptStarted_ = Clock::now();
  socket_ = ::braid::sockets::Socket(
      ::socket(view.peer.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!socket_.valid()) {
    failAttempt(view);
    return;
  }
  int one = 1;
  (void)setsockopt(socket_.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  const auto* peer = reinterpret_cast<const sockaddr*>(&view.peer);
  if (::connect(socket_.fd(), peer, ::braid::sockets::addressLength(view.peer)) == 0 ||
      errno == EINPROGRESS) {
    link_ = Link::kConnecting;  // poll reports POLLOUT once it is done, at once if it is
    return;
  }
  failAttempt(view);
}

void Requester::failAttempt(const QueuePair::RequesterView& view) {
  socket_.close();
  link_ = Link::kIdle;
  rxHave_ = 0;
  Clock::time_point now = Clock::now();
  if (view.workWaiting) {
    idleBackoff_ = kRetryInterval;
    nextAttempt_ = now + kRetryInterval;
  } else {
    nextAttempt_ = now + idleBackoff_;
    idleBackoff_ = std::min(idleBackoff_ * 2, kMaxIdleBackoff);
  }
}

void Requester::finishConnect(const QueuePair::RequesterView& view) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(socket_.fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    failAttempt(view);  // refused, unreachable: the peer may come up later
    return;
  }
  auto hello = wire::encodeHello(view.hello);
  ssize_t n = ::send(socket_.fd(), hello.data(), hello.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n != static_cast<ssize_t>(hello.size())) {
    failAttempt(view);
    return;
  }
  link_ = Link::kGreeting;
  rxHave_ = 0;
}

void Requester::readHelloReply(const QueuePair::RequesterView& view) {
  ssize_t n = ::recv(socket_.fd(), rxBuffer_.data() + rxHave_, wire::kHelloReplyBytes - rxHave_,
                     MSG_DONTWAIT);
  if (n < 0 && wouldBlock(errno)) return;
  if (n <= 0) {
    failAttempt(view);
    return;
  }
  rxHave_ += static_cast<size_t>(n);
  if (rxHave_ < wire::kHelloReplyBytes) return;
  rxHave_ = 0;
  std::optional<wire::HelloVerdict> verdict = wire::decodeHelloReply(rxBuffer_.data());
  if (verdict != wire::HelloVerdict::kAccepted) {
    failAttempt(view);  // not in RTR yet, not there (yet), or not its peer: try again
    return;
  }
  link_ = Link::kReady;
  idleBackoff_ = kRetryInterval;
  BRAID_TRACE("emulated HCA: QP %u connected to QP %u at %s", view.hello.srcQpNum,
              view.hello.dstQpNum, ::braid::sockets::addressToString(view.peer).c_str());
}

void Requester::readResponses() {
  while (true) {
    ssize_t n =
        ::recv(socket_.fd(), rxBuffer_.data() + rxHave_, rxBuffer_.size() - rxHave_, MSG_DONTWAIT);
    if (n < 0 && wouldBlock(errno)) {
      if (errno == EINTR) continue;
      return;
    }
    if (n <= 0) {
      goSilent();
      return;
    }
    rxHave_ += static_cast<size_t>(n);
    size_t used = 0;
    while (rxHave_ - used >= wire::kResponseBytes) {
      std::optional<wire::Response> response = wire::decodeResponse(rxBuffer_.data() + used);
      // A read's answer carries its data: wait until all of it is here.
      const size_t data = response && response->kind == wire::ResponseKind::kReadData
                              ? static_cast<size_t>(response->value)
                              : 0;
      if (response && data <= wire::kMaxReadBytes && rxHave_ - used < wire::kResponseBytes + data) {
        break;
      }
      if (!response || data > wire::kMaxReadBytes ||
          !qp_.onResponse(epoch_, *response, rxBuffer_.data() + used + wire::kResponseBytes)) {
        BRAID_WARN("emulated HCA: QP %u: its peer answered what it did not ask; ignoring the peer",
                   qp_.qpNum());
        goSilent();
        return;
      }
      used += wire::kResponseBytes + data;
    }
    memmove(rxBuffer_.data(), rxBuffer_.data() + used, rxHave_ - used);
    rxHave_ -= used;
  }
}

bool Requester::loadNextRequest() {
  std::optional<SendWork> work = qp_.takeNextSend(epoch_);
  if (!work) return false;
  const bool read = work->header.opcode == wire::Opcode::kRdmaRead;
  size_t total = wire::kRequestHeaderBytes + (read ? 0 : work->header.length);
  if (txBuffer_.size() > kKeepBufferBytes && total <= kKeepBufferBytes) txBuffer_ = {};
  // Grown, never shrunk to size: resize() zero-fills only what is new.
  if (txBuffer_.size() < total) txBuffer_.resize(total);
  auto header = wire::encodeRequest(work->header);
  memcpy(txBuffer_.data(), header.data(), header.size());
  uint8_t* payload = txBuffer_.data() + header.size();
  if (read) {
    // Nothing follows a read's header: its SGEs are where the answer's data goes.
  } else if (work->isInline) {
    if (!work->inlineData.empty())
      memcpy(payload, work->inlineData.data(), work->inlineData.size());
  } else if (const char* why =
                 qp_.hca().readLocal(qp_.pd(), work->sges.data(), work->sges.size(), payload)) {
    qp_.failLastTakenLocally(epoch_, why);
    return false;
  }
  if (!read) qp_.hca().countTransmitted(qp_.qpNum(), work->header.length);
  txLength_ = total;
  txSent_ = 0;
  return true;
}

bool Requester::transmit() {
  bool progressed = false;
  while (txSent_ < txLength_) {
    ssize_t n = ::send(socket_.fd(), txBuffer_.data() + txSent_, txLength_ - txSent_,
                       MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      txSent_ += static_cast<size_t>(n);
      progressed = true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    goSilent();
    return false;
  }
  if (progressed) qp_.noteTransmitProgress(epoch_);
  if (txSent_ < txLength_) return false;
  txLength_ = 0;
  txSent_ = 0;
  return true;
}

void Requester::goSilent() {
  BRAID_TRACE(
      "emulated HCA: QP %u: the connection to its peer broke; outstanding writes will "
      "time out",
      qp_.qpNum());
  drop();
  link_ = Link::kSilent;
}

void Requester::drop() {
  socket_.close();
  link_ = Link::kIdle;
  txLength_ = 0;
  txSent_ = 0;
  rxHave_ = 0;
}

}  // namespace braid::transport::ib::emulated
