// Authenticated greetings: a connection's first message proves that its sender holds the
// communicator's secret (HMAC-SHA-256 over a challenge the listener sent), and the acceptor that
// reads the greetings of many connections at once.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/deadline.h"
#include "base/encryption_key.h"
#include "base/socket.h"
#include "base/socket_io.h"

namespace braid::sockets {

/// What a connection's first message must prove: that its sender holds the communicator's
/// secret (the unique id's, bootstrap/unique_id.h), for one purpose (the root, the ring, the
/// watcher, a transport's FIFO). The listener sends a fresh random challenge; the connecting
/// side answers with its greeting and HMAC-SHA-256(secret, purpose, challenge, greeting), so a
/// port scanner, a stale rank of another job or a replayed greeting proves nothing.
struct Proof {
  std::array<uint8_t, 16> secret{};
  uint32_t purpose = 0;
};
inline constexpr size_t kChallengeBytes = 16;
inline constexpr size_t kProofTagBytes = 32;
using Challenge = std::array<uint8_t, kChallengeBytes>;
using ProofTag = std::array<uint8_t, kProofTagBytes>;

/// A fresh random challenge.
Challenge newChallenge();
/// The tag that answers `challenge` for `greeting`.
ProofTag proofTag(const Proof& proof, const Challenge& challenge, const void* greeting,
                  size_t bytes);
/// The connecting side: reads the listener's challenge, then sends `greeting` and its tag. While
/// the process has an encryption key (encryption_key.h), seals `socket` in between
/// (seal_handshake.h): everything after the challenge, the greeting included, goes sealed.
IoResult sendProvenGreeting(Socket& socket, const Proof& proof, const void* greeting, size_t bytes,
                            const Deadline& deadline);

/// Accepts connections and reads a fixed-size first message ("greeting")
/// from each. All half-greeted connections are watched at once, so a silent
/// or slow client cannot hold up the ones behind it; at most kMaxPending wait
/// at once (the oldest goes first), each for kPendingTimeoutMs at most, so a
/// flood of silent connections holds no descriptors for long. With a Proof,
/// each connection gets a challenge and a greeting whose tag does not answer it
/// is dropped. With a Proof and an encryption key (encryption_key.h), each connection must
/// seal itself first (seal_handshake.h): one that does not is dropped; one whose key differs
/// ends next() with kWrongKey, naming it, since the job cannot go on without that peer.
class GreetingAcceptor {
 public:
  static constexpr size_t kMaxPending = 64;
  static constexpr int64_t kPendingTimeoutMs = 10000;

  /// `listener` must outlive the acceptor.
  GreetingAcceptor(const Socket& listener, size_t greetingBytes,
                   std::optional<Proof> proof = std::nullopt)
      : listener_(listener), greetingBytes_(greetingBytes), proof_(proof) {}

  /// The next connection whose greeting arrived in full (and, with a Proof,
  /// answered its challenge). Connections that close before that, or answer
  /// wrong, are dropped. kFailed when the listener broke (or was shut down).
  IoResult next(const Deadline& deadline, Socket* connection, std::vector<char>* greeting);
  /// Connections dropped so far because their tag was wrong (for tests and logs).
  size_t refused() const { return refused_; }

 private:
  struct Pending {
    Socket socket;
    std::vector<char> buffer;  ///< the greeting, then (with a Proof) its tag
    size_t received = 0;
    Challenge challenge{};
    std::chrono::steady_clock::time_point since;
    // Sealing (with a Proof, while the process has an encryption key): the connector's hello
    // comes first, then the greeting through the seal.
    std::shared_ptr<const PreSharedKey> key;
    std::vector<char> hello;
    bool wrongKey = false;
  };
  bool acceptPending();
  /// Reads what is there; true when the connection is finished (full or dead).
  bool readPending(Pending& pending);
  /// Reads the connector's hello and seals; true when the connection is finished (dropped).
  bool readHello(Pending& pending);
  /// With a Proof: whether a full buffer's tag answers its challenge.
  bool proven(const Pending& pending) const;

  const Socket& listener_;
  size_t greetingBytes_;
  std::optional<Proof> proof_;
  std::vector<Pending> pending_;
  size_t refused_ = 0;
};
}  // namespace braid::sockets
