// A sealed connection's state: the keys, nonces and counters that authenticate and encrypt every
// byte of one TCP connection, and the frames in flight. A Socket owns its seal (socket.h); every
// transfer of socket_io.h goes through it when it has one, so the bootstrap, the watch, the
// socket transport and the handles traded over its rendezvous are sealed in this one place.
//
// The AEAD is AES-256-GCM from OpenSSL's libcrypto (openssl_library.h). Each direction has its
// own 32-byte key and 12-byte IV, derived with HKDF-SHA-256 from the pre-shared key
// (encryption_key.h), salted with the nonces both ends sent for this connection (so no two
// connections share a key) and labelled with the direction. A frame is
//
//     length (4 bytes, little endian) | ciphertext (length bytes) | tag (16 bytes)
//
// with the length as additional authenticated data and the nonce the IV XOR the frame's number in
// its direction (as TLS 1.3 does): a frame altered, cut, replayed, reordered or taken from another
// connection fails authentication, and the connection with it.
//
// Handshake (socket_greeting.cc runs it before the greeting): the listener's challenge is its
// nonce; the connector answers with kSealMagic, its nonce and a confirmation frame; the listener
// sends its own confirmation frame before it checks the connector's. Each end opens the other's,
// so a wrong key fails at connection on both ends, each naming the other.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/encryption_key.h"
#include "braid/status.h"

namespace braid::sockets {

inline constexpr size_t kSealNonceBytes = 16;
inline constexpr size_t kSealTagBytes = 16;
inline constexpr size_t kSealHeaderBytes = 4;
/// The most plaintext one frame carries: larger transfers go as several frames.
inline constexpr size_t kSealMaxFrameBytes = 256 * 1024;
/// What the connector's hello opens with: a listener that reads anything else is talking to a
/// peer that does not seal.
inline constexpr std::array<char, 8> kSealMagic = {'b', 'r', 'a', 'i', 'd', 'A', 'E', 'S'};
/// The plaintext of a confirmation frame.
inline constexpr std::array<char, 16> kSealConfirm = {'b', 'r', 'a', 'i', 'd', ' ', 'k', 'e',
                                                      'y', ' ', 'c', 'o', 'n', 'f', 'i', 'r'};
inline constexpr size_t kSealConfirmFrameBytes =
    kSealHeaderBytes + kSealConfirm.size() + kSealTagBytes;
/// The connector's hello: magic, nonce, confirmation frame.
inline constexpr size_t kSealHelloBytes =
    kSealMagic.size() + kSealNonceBytes + kSealConfirmFrameBytes;

using SealNonce = std::array<uint8_t, kSealNonceBytes>;

/// How a sealed read or write ended where it could not go on (with errno's meaning as ::recv's).
/// kUnauthenticErrno: a frame failed authentication or was malformed; the connection is dead.
inline constexpr int kUnauthenticErrno = 74;  // EBADMSG

class SocketSeal {
 public:
  enum class Role { kListener, kConnector };

  /// The seal of one connection from `key` and the two ends' nonces, as `role` sees it.
  static Result<std::unique_ptr<SocketSeal>> make(const PreSharedKey& key, Role role,
                                                  const SealNonce& listenerNonce,
                                                  const SealNonce& connectorNonce);
  ~SocketSeal();
  SocketSeal(const SocketSeal&) = delete;
  SocketSeal& operator=(const SocketSeal&) = delete;

  /// Seals the next outgoing frame from up to kSealMaxFrameBytes of `a` then `b` (two parts, as
  /// a header and its payload) into *frame; how many plaintext bytes it took.
  size_t sealFrame(const void* a, size_t aBytes, const void* b, size_t bBytes,
                   std::vector<char>* frame);
  /// Opens the next incoming frame, whole in `frame`, into `plain` (its length bytes); false
  /// when it fails authentication (what is in `plain` then is garbage).
  bool openFrame(const char* frame, size_t frameBytes, char* plain);

  /// Non-blocking I/O on `fd` through the seal, with ::send's and ::recv's results: bytes of
  /// plaintext taken or given, 0 (recv: end of file), or -1 with errno (EAGAIN,
  /// kUnauthenticErrno, the system's). A send that returns EAGAIN keeps its frame: call again
  /// with the same unsent bytes.
  ssize_t send(int fd, const void* a, size_t aBytes, const void* b, size_t bBytes);
  ssize_t recv(int fd, void* data, size_t bytes);
  /// Plaintext already opened and not yet read: a poll on the socket would not see it.
  bool hasPlaintext() const { return plainRead_ < plain_.size(); }
  /// How many bytes of the arriving frame are still to come (its header's, while that is not
  /// whole): a receive may wait for that many at once (SO_RCVLOWAT), since a sender always
  /// finishes the frames it began.
  size_t bytesToFrameEnd() const;

 private:
  struct Direction {
    std::array<uint8_t, 32> key{};
    std::array<uint8_t, 12> iv{};
    uint64_t frames = 0;  // frames sealed or opened so far: the next nonce's number
    void* ctx = nullptr;  // EVP_CIPHER_CTX
    std::array<uint8_t, 12> nextNonce();
  };
  SocketSeal() = default;
  bool readFrameBytes(int fd, ssize_t* result);

  Direction out_, in_;
  // Sending: the frame being written, how much of it went, the plaintext bytes it carries.
  std::vector<char> sending_;
  size_t sendingSent_ = 0;
  size_t sendingPlain_ = 0;
  // Receiving: the frame arriving (never past its end), and plaintext opened but not read.
  std::vector<char> arriving_;
  size_t arrivingHave_ = 0;
  std::vector<char> plain_;
  size_t plainRead_ = 0;
  bool broken_ = false;
};

}  // namespace braid::sockets
