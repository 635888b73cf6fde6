// The bootstrap root (see root.h): collects one Hello per rank, then answers
// every rank with its successor's address, or with an error naming the ranks
// that never arrived.
#include "bootstrap/root.h"
#include "base/socket_address.h"
#include "base/socket_greeting.h"
#include "base/socket_io.h"

#include <cinttypes>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "base/deadline.h"
#include "base/log.h"
#include "bootstrap/root_blocks.h"

namespace braid::bootstrap {
namespace {

/// Replies are a few hundred bytes that fit any socket buffer; this only
/// guards against a kernel that will not take them at all.
constexpr int64_t kReplySendTimeoutMs = 10000;
/// How many missing ranks an error message lists before it summarises.
constexpr int kMaxListedRanks = 16;

void sendReply(const sockets::Socket& socket, wire::ReplyKind kind, const void* payload,
               uint32_t length) {
  wire::ReplyHeader header{static_cast<uint32_t>(kind), length};
  Deadline deadline = Deadline::afterMs(kReplySendTimeoutMs);
  sockets::IoResult io = sockets::sendAll(socket, &header, sizeof(header), deadline);
  if (io.ok() && length > 0) io = sockets::sendAll(socket, payload, length, deadline);
  // A rank that has gone away finds out on its own; the others still get theirs.
  if (!io.ok()) BRAID_INFO("bootstrap root: could not answer a rank: %s", io.describe().c_str());
}

void sendError(const sockets::Socket& socket, std::string message) {
  if (message.size() > wire::kMaxErrorBytes) message.resize(wire::kMaxErrorBytes);
  sendReply(socket, wire::ReplyKind::kError, message.data(), static_cast<uint32_t>(message.size()));
}

class Root {
 public:
  Root(sockets::Socket listener, uint64_t magic, const sockets::Proof& proof, int64_t timeoutMs)
      : listener_(std::move(listener)),
        magic_(magic),
        proof_(proof),
        deadline_(Deadline::afterMs(timeoutMs)),
        firingTimeoutMs_(timeoutMs) {}

  void run();

 private:
  /// Checks a Hello; returns an empty string when it is admitted.
  std::string validate(const wire::Hello& hello) const;
  void admit(sockets::Socket connection, const wire::Hello& hello);
  void answerAll();
  /// Tells every rank that joined why the communicator cannot be made: `why`, or (empty) that
  /// the root timed out waiting for the rest; closes the listener.
  void failAll(const std::string& why = "");
  std::string missingRanks() const;

  /// Slots of the block's ranks, then (several roots) the next block's first rank's.
  int slots() const { return count_ + (nroots_ > 1 ? 1 : 0); }
  /// The rank a slot stands for: nranks_ for the introduction of rank 0 to the last root.
  int rankOfSlot(int slot) const { return first_ + slot; }
  /// The first Hello admitted sets the communicator's shape and this root's block.
  void learnShape(const wire::Hello& hello);

  sockets::Socket listener_;
  uint64_t magic_;
  sockets::Proof proof_;  ///< what a rank's Hello must prove
  Deadline deadline_;
  int64_t firingTimeoutMs_;  ///< the timeout deadline_ stands for, for the message
  std::string refusal_;      ///< a connection refused for its encryption key: the job fails
  int nranks_ = -1;          ///< set by the first admitted Hello
  int nroots_ = 1;
  int iroot_ = 0;
  int first_ = 0;  ///< the first rank of this root's block
  int count_ = 0;  ///< the ranks of the block
  int arrived_ = 0;
  std::vector<sockets::Socket> ranks_;  ///< by slot
  std::vector<sockaddr_storage> addresses_;
};

void Root::run() {
  Result<sockaddr_storage> bound = sockets::boundAddress(listener_);
  std::string where = bound.ok() ? sockets::addressToString(bound.value()) : "<unknown>";
  BRAID_INFO("bootstrap root: listening on %s, magic 0x%016" PRIx64, where.c_str(), magic_);
  sockets::GreetingAcceptor acceptor(listener_, sizeof(wire::Hello), proof_);
  while (nranks_ < 0 || arrived_ < slots()) {
    sockets::Socket connection;
    std::vector<char> greeting;
    sockets::IoResult io = acceptor.next(deadline_, &connection, &greeting);
    if (io.end == sockets::IoEnd::kWrongKey) {
      // A rank of this job with another key (or none): the job cannot go on without it. The
      // ranks that joined hear it now; those still to come hear it as they join.
      refusal_ = "the bootstrap root at " + where + " refused a connection: " + io.describe();
      BRAID_WARN("%s", refusal_.c_str());
      if (nranks_ >= 0) {
        failAll(refusal_);
        return;
      }
      continue;
    }
    if (!io.ok()) {
      if (io.end != sockets::IoEnd::kTimedOut) {
        BRAID_WARN("bootstrap root on %s: listener failed: %s", where.c_str(),
                   io.describe().c_str());
      }
      failAll();
      return;
    }
    wire::Hello hello;
    memcpy(&hello, greeting.data(), sizeof(hello));
    std::string problem = validate(hello);
    if (!problem.empty()) {
      BRAID_WARN("bootstrap root on %s: rejected a rank from %s: %s", where.c_str(),
                 sockets::addressToString(hello.listenAddr).c_str(), problem.c_str());
      sendError(connection, "the bootstrap root at " + where + " rejected this rank: " + problem);
      continue;
    }
    admit(std::move(connection), hello);
    if (!refusal_.empty()) {
      failAll(refusal_);
      return;
    }
  }
  answerAll();
}

std::string Root::validate(const wire::Hello& hello) const {
  const int slot = hello.rank - first_;
  const bool joined = nranks_ >= 0 && slot >= 0 && slot < slots() && ranks_[slot].valid();
  std::string problem = checkHello(hello, magic_, nranks_, joined);
  if (!problem.empty() || nranks_ < 0) return problem;
  if (hello.nroots != nroots_ || hello.iroot != iroot_) {
    return "rank " + std::to_string(hello.rank) + " counts " + std::to_string(hello.nroots) +
           " ids and this root as id " + std::to_string(hello.iroot) +
           "; the ranks before it said " + std::to_string(nroots_) + " and " +
           std::to_string(iroot_);
  }
  if (slot < 0 || slot >= slots()) {
    return "rank " + std::to_string(hello.rank) + " is not among the ranks " +
           std::to_string(first_) + ".." + std::to_string(first_ + slots() - 1) +
           " this root (id " + std::to_string(iroot_) + " of " + std::to_string(nroots_) +
           ") meets";
  }
  return "";
}

void Root::learnShape(const wire::Hello& hello) {
  nranks_ = hello.nranks;
  nroots_ = hello.nroots;
  iroot_ = hello.iroot;
  first_ = firstRankOfRoot(iroot_, nranks_, nroots_);
  count_ = ranksOfRoot(iroot_, nranks_, nroots_);
  ranks_.resize(slots());
  addresses_.resize(slots());
}

void Root::admit(sockets::Socket connection, const wire::Hello& hello) {
  if (nranks_ < 0) {
    learnShape(hello);
    // The first Hello was checked against no block: check it now that there is one.
    const std::string problem = validate(hello);
    if (!problem.empty()) {
      BRAID_WARN("bootstrap root: rejected the first rank: %s", problem.c_str());
      sendError(connection, "the bootstrap root rejected this rank: " + problem);
      nranks_ = -1;
      return;
    }
  }
  const int slot = hello.rank - first_;
  if (slot == count_) sendReply(connection, wire::ReplyKind::kFiled, nullptr, 0);  // introduction
  ranks_[slot] = std::move(connection);
  addresses_[slot] = hello.listenAddr;
  ++arrived_;
  // Give up no later than the rank that will give up first, so that it hears
  // which ranks are missing rather than a bare timeout of its own.
  if (hello.remainingMs > 0) {
    Deadline rankDeadline = Deadline::afterMs(hello.remainingMs);
    if (rankDeadline.remainingMs() < deadline_.remainingMs()) {
      deadline_ = rankDeadline;
      firingTimeoutMs_ = hello.timeoutMs;
    }
  }
  BRAID_TRACE("bootstrap root: rank %d of %d joined from %s", hello.rank, nranks_,
              sockets::addressToString(hello.listenAddr).c_str());
}

void Root::answerAll() {
  // Close the listener first: by the time any rank has its answer, a later
  // communicator on the same fixed address cannot reach this root by mistake.
  listener_.close();
  // The successor of the block's last rank is the next block's first (its introduction's slot),
  // or with one root the block's first.
  for (int slot = 0; slot < count_; ++slot) {
    const sockaddr_storage& next = addresses_[(slot + 1) % slots()];
    sendReply(ranks_[slot], wire::ReplyKind::kPeerAddress, &next, sizeof(next));
  }
  if (nroots_ == 1) {
    BRAID_INFO("bootstrap root: all %d ranks joined", nranks_);
  } else {
    BRAID_INFO("bootstrap root %d of %d: its %d ranks of %d joined", iroot_, nroots_, count_,
               nranks_);
  }
}

std::string Root::missingRanks() const {
  std::vector<int> missing;
  for (int slot = 0; slot < slots(); ++slot) {
    // The introduction of rank 0 to the last root stands for rank 0.
    if (!ranks_[slot].valid()) missing.push_back(rankOfSlot(slot) % nranks_);
  }
  std::string text = missing.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < missing.size() && i < kMaxListedRanks; ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(missing[i]);
  }
  if (missing.size() > kMaxListedRanks) {
    text += " and " + std::to_string(missing.size() - kMaxListedRanks) + " more";
  }
  return text;
}

void Root::failAll(const std::string& why) {
  listener_.close();
  if (nranks_ < 0) {
    // Nobody is waiting to hear it: an id that was made and never used.
    BRAID_INFO("bootstrap root: timed out after %" PRId64 " ms; no rank joined", firingTimeoutMs_);
    return;
  }
  std::string message = !why.empty() ? why
                                     : "timed out after " + std::to_string(firingTimeoutMs_) +
                                           " ms waiting for " + missingRanks() + " of " +
                                           std::to_string(nranks_) + " to join";
  BRAID_WARN("bootstrap root: %s", message.c_str());
  for (const auto& socket : ranks_) {
    if (socket.valid()) sendError(socket, message);
  }
}

}  // namespace

namespace wire {

ReplyRead classifyReply(const ReplyHeader& header) {
  if (header.kind == static_cast<uint32_t>(ReplyKind::kError) && header.length <= kMaxErrorBytes) {
    return ReplyRead::kError;
  }
  if (header.kind == static_cast<uint32_t>(ReplyKind::kPeerAddress) &&
      header.length == sizeof(sockaddr_storage)) {
    return ReplyRead::kAddress;
  }
  if (header.kind == static_cast<uint32_t>(ReplyKind::kFiled) && header.length == 0) {
    return ReplyRead::kFiled;
  }
  return ReplyRead::kMalformed;
}

bool isRankAddress(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in&>(address).sin_port != 0;
  }
  if (address.ss_family == AF_INET6) {
    return reinterpret_cast<const sockaddr_in6&>(address).sin6_port != 0;
  }
  return false;
}

std::string printableText(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return out;
}

}  // namespace wire

std::string checkHello(const wire::Hello& hello, uint64_t magic, int nranks, bool alreadyJoined) {
  char text[160];
  if (hello.magic != magic) {
    snprintf(text, sizeof(text),
             "wrong magic 0x%016" PRIx64 " (this root serves 0x%016" PRIx64
             "); is the unique id from another communicator?",
             hello.magic, magic);
    return text;
  }
  // An introduction to the last of several roots comes from rank 0 as rank nranks.
  // In 64 bits: nranks comes off the wire, and INT_MIN - 1 is undefined.
  const int64_t rankLimit = int64_t{hello.nranks} - (hello.nroots > 1 ? 0 : 1);
  if (hello.nranks < 1 || hello.nranks > kMaxRanks || hello.rank < 0 || hello.rank > rankLimit) {
    snprintf(text, sizeof(text), "rank %d of %d is out of range (at most %d ranks)", hello.rank,
             hello.nranks, kMaxRanks);
    return text;
  }
  if (hello.nroots < 1 || hello.nroots > hello.nranks || hello.iroot < 0 ||
      hello.iroot >= hello.nroots) {
    snprintf(text, sizeof(text), "rank %d names root %d of %d ids, out of range for %d ranks",
             hello.rank, hello.iroot, hello.nroots, hello.nranks);
    return text;
  }
  if (nranks >= 0 && hello.nranks != nranks) {
    snprintf(text, sizeof(text), "rank %d says nranks is %d but the ranks before it said %d",
             hello.rank, hello.nranks, nranks);
    return text;
  }
  if (alreadyJoined) {
    snprintf(text, sizeof(text), "rank %d has already joined", hello.rank);
    return text;
  }
  const sa_family_t family = hello.listenAddr.ss_family;
  if (family != AF_INET && family != AF_INET6 && !(family == AF_UNSPEC && hello.nranks == 1)) {
    snprintf(text, sizeof(text), "rank %d sent a listen address of family %d", hello.rank,
             static_cast<int>(family));
    return text;
  }
  return "";
}

Status startRoot(sockets::Socket listener, const UniqueIdContents& id, int64_t timeoutMs) {
  auto root = std::make_unique<Root>(std::move(listener), id.magic, proofOf(id, kProveRootHello),
                                     timeoutMs);
  // std::thread reports failure only by throwing; turn it into a value here.
  try {
    std::thread([root = std::move(root)]() { root->run(); }).detach();
  } catch (const std::system_error& e) {
    return systemError(std::string("cannot start the bootstrap root thread: ") + e.what());
  }
  return Status::success();
}

}  // namespace braid::bootstrap
