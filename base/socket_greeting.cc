// Authenticated greetings: a connection's first message, proved with the communicator's
// secret (HMAC-SHA-256 over a fresh challenge), and the acceptor that reads them: see
// socket_greeting.h.
#include "base/socket_greeting.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "base/hmac.h"
#include "base/log.h"
#include "base/seal_handshake.h"
#include "base/socket_address.h"

namespace braid::sockets {

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

IoResult sendProvenGreeting(Socket& socket, const Proof& proof, const void* greeting, size_t bytes,
                            const Deadline& deadline) {
  Challenge challenge;
  IoResult io = recvAll(socket, challenge.data(), challenge.size(), deadline);
  if (!io.ok()) return io;
  io = sealAsConnector(socket, challenge, deadline);
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
        p.key = encryptionKey();
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

bool GreetingAcceptor::readHello(Pending& pending) {
  pending.hello.resize(kSealHelloBytes);
  size_t have = pending.received;
  while (have < kSealHelloBytes) {
    const ssize_t n = ::recv(pending.socket.fd(), pending.hello.data() + have,
                             kSealHelloBytes - have, MSG_DONTWAIT);
    if (n > 0) {
      have += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    pending.received = have;
    return !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));  // else closed or failed
  }
  pending.received = 0;
  std::string why;
  const std::string who = describe(connectionEnds(pending.socket));
  switch (
      sealAsListener(pending.socket, *pending.key, pending.challenge, pending.hello.data(), &why)) {
    case HelloVerdict::kSealed:
      return false;  // on to the greeting, through the seal
    case HelloVerdict::kWrongKey:
      BRAID_WARN("encryption: refused the connection %s: %s", who.c_str(), why.c_str());
      pending.wrongKey = true;
      return true;
    case HelloVerdict::kNotSealed:
      ++refused_;
      BRAID_INFO("encryption: dropped the connection %s: %s", who.c_str(), why.c_str());
      return true;
    case HelloVerdict::kFailed:
      BRAID_WARN("encryption: dropped the connection %s: %s", who.c_str(), why.c_str());
      return true;
  }
  return true;
}

bool GreetingAcceptor::readPending(Pending& pending) {
  if (pending.key && pending.socket.seal() == nullptr) {
    if (readHello(pending)) return true;
    if (pending.socket.seal() == nullptr) return false;  // the rest of the hello is to come
  }
  const size_t want = pending.buffer.size();
  size_t got = 0;
  const bool alive = recvArrived(pending.socket, pending.buffer.data() + pending.received,
                                 want - pending.received, &got);
  pending.received += got;
  return !alive || pending.received == want;
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
    bool opened = false;  // a sealed greeting already opened: no waiting for the socket
    for (const auto& p : pending_) {
      fds.push_back({p.socket.fd(), POLLIN, 0});
      opened = opened || readableNow(p.socket);
    }
    int timeoutMs = opened ? 0 : deadline.pollMs();
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
    if (rc < 0 || (rc == 0 && !opened)) continue;
    // Back to front, so erasing a finished entry keeps earlier indices valid.
    for (size_t i = pending_.size(); i-- > 0;) {
      const bool ready = fds[i + 1].revents != 0 || readableNow(pending_[i].socket);
      if (!ready || !readPending(pending_[i])) continue;
      Pending done = std::move(pending_[i]);
      pending_.erase(pending_.begin() + static_cast<ptrdiff_t>(i));
      if (done.wrongKey) {
        result.end = IoEnd::kWrongKey;
        result.where = describe(connectionEnds(done.socket));
        return result;
      }
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