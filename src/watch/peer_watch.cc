// The watcher (see peer_watch.h): joining the ring, the thread's poll loop, the word of a loss,
// letters, and what a fork's child must not inherit.
#include "watch/peer_watch.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "base/hmac.h"
#include "base/log.h"
#include "base/seal_handshake.h"
#include "base/socket_address.h"

namespace braid::watch {
namespace {

using Clock = std::chrono::steady_clock;

/// A connection to the listener that has not finished its greeting (and letter) in this long is
/// dropped, and at most this many wait at once: a port scanner or a stuck client holds nothing.
constexpr int64_t kArrivalTimeoutMs = 5000;
constexpr size_t kMaxArrivals = 64;
/// How long the thread, leaving, tries to get its kLeaving frames out.
constexpr int64_t kLeavingFlushMs = 200;
/// How often a neighbour's life line is tried: a death is heard within this, a few cheap
/// wakeups a second.
constexpr int kLifeLinePollMs = 50;

/// What each rank tells the others at start: its listener, and where its life line is.
struct Card {
  sockaddr_storage listener;
  LifeLineAddress line;
};

int64_t msSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

/// A heartbeat every quarter of the timeout, so three may be lost before a neighbour is.
int64_t heartbeatIntervalMs(int64_t timeoutMs) {
  if (timeoutMs <= 0) return 1000;
  return std::clamp<int64_t>(timeoutMs / 4, 20, 1000);
}

}  // namespace

// Every live watcher, so that a fork's child can close their descriptors: a child that keeps a
// copy of a watch connection open would hide its parent's death from the neighbours (a PyTorch
// DataLoader forks its workers from a rank, and they never exec).
struct ForkRegistry {
  static ForkRegistry& get() {
    static ForkRegistry* registry = new ForkRegistry();  // lives as long as the process
    return *registry;
  }
  void add(PeerWatch* w) {
    std::call_once(installed, [] {
      pthread_atfork([] { get().mutex.lock(); }, [] { get().mutex.unlock(); },
                     [] {
                       for (PeerWatch* w : get().watches) w->closeForFork();
                       get().mutex.unlock();
                     });
    });
    std::lock_guard<std::mutex> lock(mutex);
    watches.insert(w);
  }
  void remove(PeerWatch* w) {
    std::lock_guard<std::mutex> lock(mutex);
    watches.erase(w);
  }
  std::mutex mutex;
  std::set<PeerWatch*> watches;
  std::once_flag installed;
};

std::string Loss::describe() const {
  std::string what;
  if (cause == wire::Cause::kSilent) {
    what = "nothing came from it for " + std::to_string(silentMs) +
           " ms (BRAID_HEARTBEAT_TIMEOUT_MS): its host is down, the link is cut, or it is "
           "stopped";
  } else if (cause == wire::Cause::kLinkFailed) {
    what = "the network link to it failed (a transport error, not its process ending)";
  } else if (cause == wire::Cause::kAbandoned) {
    what = "it aborted the communicator and left, so its part of the calls will not come";
  } else if (cause == wire::Cause::kEnded) {
    what =
        "its watch thread ended without a goodbye: the process is ending (killed, crashed or "
        "exited)";
  } else {
    what =
        "its watch connection closed without a goodbye: the process ended (killed, crashed "
        "or exited)";
  }
  return what + ", as rank " + std::to_string(observer) + " saw";
}

PeerWatch::PeerWatch(int rank, int nranks, const WatchOptions& options, OnLoss onLoss)
    : rank_(rank), nranks_(nranks), options_(options), onLoss_(std::move(onLoss)) {}

Result<std::unique_ptr<PeerWatch>> PeerWatch::start(bootstrap::Bootstrap& bootstrap,
                                                    const WatchOptions& options, OnLoss onLoss) {
  const int rank = bootstrap.rank();
  const int nranks = bootstrap.nranks();
  std::unique_ptr<PeerWatch> w(new PeerWatch(rank, nranks, options, std::move(onLoss)));
  if (nranks == 1) return w;  // nobody to watch
  sockaddr_storage local = bootstrap.localAddress();
  BRAID_ASSIGN_OR_RETURN(w->listener_, sockets::listenOn(local, false));
  std::vector<Card> cards(nranks, Card{});
  BRAID_ASSIGN_OR_RETURN(cards[rank].listener, sockets::boundAddress(w->listener_));
  w->ownLine_ = OwnLifeLine::make(options.magic, rank);  // none: the sockets alone watch it
  if (w->ownLine_) cards[rank].line = w->ownLine_->address();
  BRAID_TRY(
      bootstrap.allGather(cards.data(), sizeof(Card)).withContext("watch: exchanging addresses"));
  w->addresses_.assign(nranks, sockaddr_storage{});
  for (int r = 0; r < nranks; ++r) w->addresses_[r] = cards[r].listener;

  // Connect first, then accept, as the bootstrap does: the kernel completes every connect
  // before anyone accepts, so no rank waits on another in a cycle. The successor's challenge
  // comes once it accepts: it is answered on a thread of its own while this one accepts.
  const Deadline deadline = Deadline::afterMs(options.setupTimeoutMs).cancelledBy(options.cancel);
  const int next = (rank + 1) % nranks;
  const int prev = (rank - 1 + nranks) % nranks;
  BRAID_ASSIGN_OR_RETURN(w->successor_.socket,
                         sockets::connectWithRetry(w->addresses_[next], deadline));
  sockets::IoResult greeted;
  std::thread greeter([&] {
    wire::Greeting hello{options.magic, static_cast<uint32_t>(wire::Purpose::kRing), rank, 0, 0, 0};
    greeted =
        sockets::sendProvenGreeting(w->successor_.socket, w->proofFor(bootstrap::kProveWatchRing),
                                    &hello, sizeof(hello), deadline);
  });
  Status accepted = w->acceptPredecessor(prev, deadline);
  if (!accepted.ok()) w->successor_.socket.shutdown();  // the greeter gives up at once
  greeter.join();
  if (!greeted.ok()) {
    return remoteError("watch: greeting rank " + std::to_string(next) + ": " + greeted.describe());
  }
  BRAID_TRY(accepted);
  w->successor_.peer = next;
  w->predecessor_.peer = prev;
  w->successor_.line = PeerLifeLine::open(cards[next].line, options.magic, next);
  w->predecessor_.line = PeerLifeLine::open(cards[prev].line, options.magic, prev);
  w->successor_.lastHeard = w->predecessor_.lastHeard = Clock::now();
  w->wakeFd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (w->wakeFd_ < 0) return systemError(std::string("watch: eventfd: ") + strerror(errno));
  ForkRegistry::get().add(w.get());
  w->thread_ = std::thread([raw = w.get()] { raw->run(); });
  BRAID_INFO("watch: rank %d watches ranks %d and %d (heartbeat timeout %lld ms)", rank, prev, next,
             static_cast<long long>(options.heartbeatTimeoutMs));
  return w;
}

Status PeerWatch::acceptPredecessor(int prev, const Deadline& deadline) {
  sockets::GreetingAcceptor acceptor(listener_, sizeof(wire::Greeting),
                                     proofFor(bootstrap::kProveWatchRing));
  while (!predecessor_.socket.valid()) {
    sockets::Socket connection;
    std::vector<char> bytes;
    const sockets::IoResult io = acceptor.next(deadline, &connection, &bytes);
    if (!io.ok()) {
      return remoteError("watch: waiting for rank " + std::to_string(prev) +
                         " to connect: " + io.describe());
    }
    wire::Greeting g;
    memcpy(&g, bytes.data(), sizeof(g));
    if (g.magic == options_.magic && g.purpose == static_cast<uint32_t>(wire::Purpose::kRing) &&
        g.rank == prev) {
      predecessor_.socket = std::move(connection);
    } else {
      BRAID_WARN("watch: rank %d dropped a stray connection (rank %d, purpose %u)", rank_, g.rank,
                 g.purpose);
    }
  }
  return Status::success();
}

sockets::Proof PeerWatch::proofFor(uint32_t purpose) const {
  sockets::Proof p = options_.proof;
  p.purpose = purpose;
  return p;
}

PeerWatch::~PeerWatch() {
  if (forkedAway_) {
    thread_.detach();  // a fork's child: the thread stayed in the parent
  } else {
    leave();
  }
  ForkRegistry::get().remove(this);
  if (wakeFd_ >= 0) ::close(wakeFd_);
}

void PeerWatch::leave(bool abandoning) {
  if (left_ || forkedAway_) return;
  left_ = true;
  abandoning_.store(abandoning);
  leaving_.store(true);
  if (thread_.joinable()) {
    const uint64_t one = 1;
    (void)!::write(wakeFd_, &one, sizeof(one));
    thread_.join();
  }
}

void PeerWatch::closeForFork() {
  forkedAway_ = true;
  auto closeSocket = [](sockets::Socket& s) {
    if (s.valid()) ::close(s.release());
  };
  closeSocket(listener_);
  closeSocket(successor_.socket);
  closeSocket(predecessor_.socket);
  for (Arrival& a : arrivals_) closeSocket(a.socket);
}

std::optional<Loss> PeerWatch::firstLoss() const {
  if (!anyLoss_.load(std::memory_order_acquire)) return std::nullopt;
  std::lock_guard<std::mutex> lock(mutex_);
  if (losses_.empty()) return std::nullopt;
  return losses_.front();
}

std::vector<Loss> PeerWatch::losses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return losses_;
}

std::optional<Loss> PeerWatch::awaitLoss(int64_t ms) const {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return !losses_.empty(); });
  if (losses_.empty()) return std::nullopt;
  return losses_.front();
}

void PeerWatch::run() {
  if (ownLine_) ownLine_->hold();
  while (!leaving_.load()) pollOnce();
  // Let go first: a neighbour that tries the line from now on takes the going for no loss.
  if (ownLine_) ownLine_->letGo();
  // Leaving in order: the kLeaving frames must reach the neighbours before the close does.
  // A rank that aborted its communicator says so: its neighbours take its going for a loss
  // then, since the calls they wait in cannot finish without it.
  const uint32_t cause = abandoning_.load() ? static_cast<uint32_t>(wire::Cause::kAbandoned) : 0;
  wire::Frame bye{static_cast<uint32_t>(wire::FrameKind::kLeaving), rank_, rank_, cause, 0};
  for (Link* link : {&successor_, &predecessor_}) {
    if (!link->socket.valid()) continue;
    const Deadline flushBy = Deadline::afterMs(kLeavingFlushMs);
    if (!sockets::sendAll(link->socket, &bye, sizeof(bye), flushBy).ok()) {
      BRAID_INFO("watch: rank %d could not say goodbye to rank %d", rank_, link->peer);
    }
    link->socket.close();
  }
  listener_.close();
  arrivals_.clear();
}

void PeerWatch::pollOnce() {
  std::vector<pollfd> fds;
  fds.push_back({wakeFd_, POLLIN, 0});
  fds.push_back({listener_.fd(), POLLIN, 0});
  fds.push_back({successor_.socket.fd(), POLLIN, 0});
  fds.push_back({predecessor_.socket.fd(), POLLIN, 0});
  for (const Arrival& a : arrivals_) fds.push_back({a.socket.fd(), POLLIN, 0});
  // poll() ignores entries with a negative descriptor: closed links simply drop out. Bytes a
  // seal has opened already are not the socket's to announce: no waiting then.
  bool opened =
      sockets::readableNow(successor_.socket) || sockets::readableNow(predecessor_.socket);
  for (const Arrival& a : arrivals_) opened = opened || sockets::readableNow(a.socket);
  const int timeoutMs = opened ? 0 : pollTimeoutMs();
  const int rc = ::poll(fds.data(), fds.size(), timeoutMs);
  if (rc < 0 && errno != EINTR) {
    BRAID_WARN("watch: rank %d: poll failed: %s", rank_, strerror(errno));
    std::this_thread::sleep_for(std::chrono::milliseconds(timeoutMs));
    return;
  }
  if (fds[0].revents != 0) {
    uint64_t count = 0;
    (void)!::read(wakeFd_, &count, sizeof(count));
  }
  std::vector<Loss> reported;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    reported.swap(reported_);
  }
  for (const Loss& loss : reported) learn(loss);
  if (fds[2].revents != 0 || sockets::readableNow(successor_.socket)) readLink(successor_);
  if (fds[3].revents != 0 || sockets::readableNow(predecessor_.socket)) readLink(predecessor_);
  // Arrivals before the listener, whose accepts append to the list.
  for (size_t i = arrivals_.size(); i-- > 0;) {
    const bool ready = fds[4 + i].revents != 0 || sockets::readableNow(arrivals_[i].socket);
    if ((ready && readArrival(arrivals_[i])) || msSince(arrivals_[i].since) > kArrivalTimeoutMs) {
      arrivals_.erase(arrivals_.begin() + static_cast<ptrdiff_t>(i));
    }
  }
  if (fds[1].revents != 0) acceptArrivals();
  sendHeartbeats();
  checkSilence();
  checkLifeLines();
}

int PeerWatch::pollTimeoutMs() const {
  const int beat = static_cast<int>(heartbeatIntervalMs(options_.heartbeatTimeoutMs));
  const bool trying = successor_.line != nullptr || predecessor_.line != nullptr;
  return trying ? std::min(beat, kLifeLinePollMs) : beat;
}

void PeerWatch::checkLifeLines() {
  for (Link* link : {&successor_, &predecessor_}) {
    if (!link->line) continue;
    const PeerLifeLine::State state = link->line->check();
    if (state == PeerLifeLine::State::kAlive) continue;
    link->line.reset();  // dead or gone in order: nothing more to hear from it
    // A neighbour that said goodbye on its connection left in order, whatever its line says.
    if (state == PeerLifeLine::State::kDead && !link->leaving) {
      learn(Loss{link->peer, wire::Cause::kEnded, rank_, 0});
    }
  }
}

void PeerWatch::readLink(Link& link) {
  if (!link.socket.valid()) return;
  while (true) {
    char* into = reinterpret_cast<char*>(&link.partial) + link.partialBytes;
    // Through the socket's seal, where the process encrypts (base/socket_io.h).
    size_t n = 0;
    const bool alive =
        sockets::recvArrived(link.socket, into, sizeof(wire::Frame) - link.partialBytes, &n);
    if (n > 0) {
      link.lastHeard = Clock::now();
      link.partialBytes += n;
      if (link.partialBytes == sizeof(wire::Frame)) {
        link.partialBytes = 0;
        handleFrame(link, link.partial);
        if (!link.socket.valid()) return;
      }
      continue;
    }
    if (alive) return;  // nothing more has arrived
    // End of file, or the connection reset: the neighbour's socket is gone.
    const int peer = link.peer;
    const bool lost = !link.leaving;
    link.socket.close();
    if (lost) learn(Loss{peer, wire::Cause::kClosed, rank_, 0});
    return;
  }
}

void PeerWatch::handleFrame(Link& link, const wire::Frame& frame) {
  switch (static_cast<wire::FrameKind>(frame.kind)) {
    case wire::FrameKind::kHeartbeat:
      return;
    case wire::FrameKind::kLeaving:
      link.leaving = true;
      if (frame.cause == static_cast<uint32_t>(wire::Cause::kAbandoned)) {
        learn(Loss{link.peer, wire::Cause::kAbandoned, rank_, 0});
      }
      return;
    case wire::FrameKind::kLoss: {
      const std::string problem = wire::checkLossFrame(frame, nranks_);
      if (!problem.empty()) {
        BRAID_WARN("watch: rank %d ignored a malformed loss frame from rank %d: %s", rank_,
                   link.peer, problem.c_str());
        return;
      }
      const auto cause = static_cast<wire::Cause>(frame.cause);
      learn(Loss{frame.rank, cause, frame.observer, frame.silentMs});
      return;
    }
  }
  BRAID_INFO("watch: rank %d ignored a frame of unknown kind %u from rank %d", rank_, frame.kind,
             link.peer);
}

void PeerWatch::acceptArrivals() {
  while (true) {
    const int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN, or out of descriptors: those waiting stay in the backlog
    }
    sockets::tuneConnection(fd);  // a neighbour's host that goes silent is noticed here too
    // Every arrival must answer a challenge of its own (base/socket_greeting.h's Proof); one whose
    // challenge does not go at once into an empty socket buffer is dropped.
    Arrival a{sockets::Socket(fd),
              std::vector<char>(sizeof(wire::Greeting) + sockets::kProofTagBytes),
              0,
              sockets::newChallenge(),
              Clock::now(),
              sockets::encryptionKey(),
              {}};
    if (::send(fd, a.challenge.data(), a.challenge.size(), MSG_DONTWAIT | MSG_NOSIGNAL) !=
        static_cast<ssize_t>(a.challenge.size())) {
      continue;
    }
    if (arrivals_.size() >= kMaxArrivals) arrivals_.erase(arrivals_.begin());
    arrivals_.push_back(std::move(a));
  }
}

bool PeerWatch::readArrivalHello(Arrival& a, bool* drop) {
  *drop = false;
  a.hello.resize(sockets::kSealHelloBytes);
  while (a.received < a.hello.size()) {
    const ssize_t n = ::recv(a.socket.fd(), a.hello.data() + a.received,
                             a.hello.size() - a.received, MSG_DONTWAIT);
    if (n > 0) {
      a.received += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    *drop = true;  // closed before its hello
    return true;
  }
  a.received = 0;
  std::string why;
  const sockets::HelloVerdict verdict =
      sockets::sealAsListener(a.socket, *a.key, a.challenge, a.hello.data(), &why);
  if (verdict != sockets::HelloVerdict::kSealed) {
    BRAID_WARN("watch: rank %d dropped a letter's connection %s: %s", rank_,
               sockets::describe(sockets::connectionEnds(a.socket)).c_str(), why.c_str());
    *drop = true;
  }
  return true;
}

bool PeerWatch::readArrival(Arrival& a) {
  if (a.key && a.socket.seal() == nullptr) {
    bool drop = false;
    if (!readArrivalHello(a, &drop)) return false;
    if (drop) return true;
  }
  while (a.received < a.bytes.size()) {
    size_t n = 0;
    const bool alive = sockets::recvArrived(a.socket, a.bytes.data() + a.received,
                                            a.bytes.size() - a.received, &n);
    if (n > 0) {
      a.received += n;
      const size_t head = sizeof(wire::Greeting) + sockets::kProofTagBytes;
      if (a.received != head || a.bytes.size() != head) continue;
      // The greeting and its tag are in: check them, and make room for the letter's payload.
      const sockets::ProofTag expected =
          sockets::proofTag(proofFor(bootstrap::kProveWatchLetter), a.challenge, a.bytes.data(),
                            sizeof(wire::Greeting));
      if (!crypto::equalInConstantTime(expected.data(), a.bytes.data() + sizeof(wire::Greeting),
                                       expected.size())) {
        BRAID_INFO("watch: rank %d dropped a connection that does not prove the secret", rank_);
        return true;
      }
      wire::Greeting g;
      memcpy(&g, a.bytes.data(), sizeof(g));
      const std::string problem = wire::checkLetterGreeting(g, options_.magic, nranks_);
      if (!problem.empty()) {
        BRAID_INFO("watch: rank %d dropped a letter: %s", rank_, problem.c_str());
        return true;
      }
      a.bytes.resize(head + g.bytes);
      continue;
    }
    if (alive) return false;
    return true;  // closed before it finished: nothing to deliver
  }
  wire::Greeting g;
  memcpy(&g, a.bytes.data(), sizeof(g));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    letters_.emplace(g.key, std::vector<char>(a.bytes.begin() + sizeof(g) + sockets::kProofTagBytes,
                                              a.bytes.end()));
  }
  changed_.notify_all();
  return true;
}

void PeerWatch::sendFrame(Link& link, const wire::Frame& frame) {
  if (!link.socket.valid()) return;
  // 24 bytes into a socket buffer that a live neighbour keeps draining: a frame that does not
  // go at once means the neighbour has stopped reading, and its silence will tell. Through the
  // socket's seal where the process encrypts: a sealed frame, once begun, must be finished, or
  // the seal's count of frames and the neighbour's part ways.
  size_t n = 0;
  const bool alive = sockets::sendWhatFits(link.socket, &frame, sizeof(frame), &n);
  if (n == sizeof(frame)) return;
  if (alive && (n > 0 || link.socket.seal() != nullptr)) {
    // Part of a frame went: finish it, or the stream is out of step.
    const Deadline by = Deadline::afterMs(kLeavingFlushMs);
    if (sockets::sendAll(link.socket, reinterpret_cast<const char*>(&frame) + n, sizeof(frame) - n,
                         by)
            .ok()) {
      return;
    }
  }
  if (alive && n == 0 && link.socket.seal() == nullptr) return;
  BRAID_INFO("watch: rank %d could not send to rank %d", rank_, link.peer);
}

void PeerWatch::sendHeartbeats() {
  if (options_.heartbeatTimeoutMs <= 0) return;
  const int64_t interval = heartbeatIntervalMs(options_.heartbeatTimeoutMs);
  if (msSince(lastBeat_) < interval) return;
  lastBeat_ = Clock::now();
  wire::Frame beat{static_cast<uint32_t>(wire::FrameKind::kHeartbeat), rank_, rank_, 0, 0};
  sendFrame(successor_, beat);
  sendFrame(predecessor_, beat);
}

void PeerWatch::checkSilence() {
  if (options_.heartbeatTimeoutMs <= 0) return;
  for (Link* link : {&successor_, &predecessor_}) {
    if (!link->socket.valid() || link->leaving) continue;
    const int64_t silent = msSince(link->lastHeard);
    if (silent <= options_.heartbeatTimeoutMs) continue;
    link->socket.close();
    learn(Loss{link->peer, wire::Cause::kSilent, rank_, silent});
  }
}

void PeerWatch::reportLinkFailure(int peer) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    reported_.push_back({peer, wire::Cause::kLinkFailed, rank_, 0});
  }
  const uint64_t one = 1;
  (void)!::write(wakeFd_, &one, sizeof(one));
}

void PeerWatch::learn(const Loss& loss) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Loss& known : losses_) {
      if (known.rank == loss.rank) return;
    }
    losses_.push_back(loss);
    anyLoss_.store(true, std::memory_order_release);
  }
  changed_.notify_all();
  // The word goes on before anything else, so that it reaches the far side of the ring before
  // this rank's own reaction (an abort, an exit) can close its connections.
  wire::Frame word{static_cast<uint32_t>(wire::FrameKind::kLoss), loss.rank, loss.observer,
                   static_cast<uint32_t>(loss.cause), loss.silentMs};
  // A rank at the end of a failed link still lives and must hear of it too; a dead one cannot.
  const bool alive = loss.cause == wire::Cause::kLinkFailed;
  if (alive || successor_.peer != loss.rank) sendFrame(successor_, word);
  if (alive || predecessor_.peer != loss.rank) sendFrame(predecessor_, word);
  if (onLoss_) onLoss_(loss);
  // The log line last: stderr may block (a pipe whose reader stalls), and neither the word nor
  // this rank's stop may wait for it.
  BRAID_WARN("watch: rank %d lost rank %d: %s", rank_, loss.rank, loss.describe().c_str());
}

Status PeerWatch::post(int peer, uint64_t key, const void* payload, size_t bytes,
                       const Deadline& deadline) {
  if (peer < 0 || peer >= nranks_ || addresses_.empty()) {
    return invalidArgument("watch: no rank " + std::to_string(peer) + " to post a letter to");
  }
  if (bytes > wire::kMaxLetterBytes) return invalidArgument("watch: letter too long");
  // The listener has been up since the ring was joined, so a refused connection means the rank
  // is gone: one attempt, never a retry until the deadline.
  BRAID_ASSIGN_OR_RETURN(sockets::Socket socket, sockets::connectOnce(addresses_[peer], deadline));
  wire::Greeting g{options_.magic,
                   static_cast<uint32_t>(wire::Purpose::kLetter),
                   rank_,
                   key,
                   static_cast<uint32_t>(bytes),
                   0};
  sockets::IoResult io = sockets::sendProvenGreeting(socket, proofFor(bootstrap::kProveWatchLetter),
                                                     &g, sizeof(g), deadline);
  if (io.ok() && bytes > 0) io = sockets::sendAll(socket, payload, bytes, deadline);
  if (!io.ok()) {
    return remoteError("watch: letter to rank " + std::to_string(peer) + ": " + io.describe());
  }
  return Status::success();
}

Result<std::vector<char>> PeerWatch::collect(uint64_t key, const Deadline& deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    auto it = letters_.find(key);
    if (it != letters_.end()) {
      std::vector<char> payload = std::move(it->second);
      letters_.erase(it);
      return payload;
    }
    if (deadline.expired()) {
      return remoteError(deadline.cancelled()
                             ? std::string("watch: stopped waiting for a letter: aborted")
                             : std::string("watch: timed out waiting for a letter"));
    }
    changed_.wait_for(lock, std::chrono::milliseconds(deadline.remainingMs(10)));
  }
}

}  // namespace braid::watch
