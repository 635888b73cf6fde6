// The encryption handshake's two ends (seal_handshake.h).
#include "base/seal_handshake.h"

#include <sys/socket.h>

#include <cstring>
#include <vector>

#include "base/socket_address.h"

namespace braid::sockets {
namespace {

SealNonce asNonce(const Challenge& challenge) {
  SealNonce nonce;
  static_assert(sizeof(nonce) == sizeof(challenge), "a challenge is a nonce");
  memcpy(nonce.data(), challenge.data(), nonce.size());
  return nonce;
}

/// A confirmation frame, sealed as the next frame of `seal`.
std::vector<char> confirmation(SocketSeal& seal) {
  std::vector<char> frame;
  seal.sealFrame(kSealConfirm.data(), kSealConfirm.size(), nullptr, 0, &frame);
  return frame;
}

/// Whether `frame` is the peer's confirmation, sealed with the keys `seal` expects.
bool confirms(SocketSeal& seal, const char* frame) {
  const uint32_t length = static_cast<uint8_t>(frame[0]) | static_cast<uint8_t>(frame[1]) << 8 |
                          static_cast<uint8_t>(frame[2]) << 16 |
                          static_cast<uint32_t>(static_cast<uint8_t>(frame[3])) << 24;
  if (length != kSealConfirm.size()) return false;
  char plain[kSealConfirm.size()];
  return seal.openFrame(frame, kSealConfirmFrameBytes, plain) &&
         memcmp(plain, kSealConfirm.data(), sizeof(plain)) == 0;
}

IoResult wrongKey(const Socket& socket) {
  IoResult io;
  io.end = IoEnd::kWrongKey;
  io.where = describe(connectionEnds(socket));
  return io;
}

}  // namespace

IoResult sealAsConnector(Socket& socket, const Challenge& challenge, const Deadline& deadline) {
  const std::shared_ptr<const PreSharedKey> key = encryptionKey();
  if (!key) return IoResult{};
  const Challenge mine = newChallenge();
  Result<std::unique_ptr<SocketSeal>> made =
      SocketSeal::make(*key, SocketSeal::Role::kConnector, asNonce(challenge), asNonce(mine));
  if (!made.ok()) {
    IoResult io;
    io.end = IoEnd::kFailed;
    io.sysErrno = EIO;
    return io;
  }
  SocketSeal& seal = *made.value();
  std::vector<char> hello(kSealMagic.begin(), kSealMagic.end());
  hello.insert(hello.end(), mine.begin(), mine.end());
  const std::vector<char> confirm = confirmation(seal);
  hello.insert(hello.end(), confirm.begin(), confirm.end());
  IoResult io = sendAll(socket, hello.data(), hello.size(), deadline);
  if (!io.ok()) return io;
  char theirs[kSealConfirmFrameBytes];
  io = recvAll(socket, theirs, sizeof(theirs), deadline);
  // A listener that does not encrypt reads the hello as a greeting that proves nothing, and
  // closes: that is a handshake refused, not a connection lost.
  if (io.end == IoEnd::kPeerClosed) return wrongKey(socket);
  if (!io.ok()) return io;
  if (!confirms(seal, theirs)) return wrongKey(socket);
  socket.attachSeal(std::move(made).value());
  return IoResult{};
}

HelloVerdict sealAsListener(Socket& socket, const PreSharedKey& key, const Challenge& challenge,
                            const char* hello, std::string* why) {
  if (memcmp(hello, kSealMagic.data(), kSealMagic.size()) != 0) {
    *why = "its first bytes are not an encryption hello: it does not encrypt";
    return HelloVerdict::kNotSealed;
  }
  Challenge theirs;
  memcpy(theirs.data(), hello + kSealMagic.size(), theirs.size());
  Result<std::unique_ptr<SocketSeal>> made =
      SocketSeal::make(key, SocketSeal::Role::kListener, asNonce(challenge), asNonce(theirs));
  if (!made.ok()) {
    *why = made.status().message();
    return HelloVerdict::kFailed;
  }
  SocketSeal& seal = *made.value();
  // A new connection's send buffer holds our challenge at most: the confirmation fits at once.
  const std::vector<char> confirm = confirmation(seal);
  const ssize_t sent =
      ::send(socket.fd(), confirm.data(), confirm.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (sent != static_cast<ssize_t>(confirm.size())) {
    *why = "the encryption confirmation could not be sent";
    return HelloVerdict::kFailed;
  }
  if (!confirms(seal, hello + kSealMagic.size() + kSealNonceBytes)) {
    *why = "its encryption key differs from this process's (ncclSetEncryption)";
    return HelloVerdict::kWrongKey;
  }
  socket.attachSeal(std::move(made).value());
  return HelloVerdict::kSealed;
}

}  // namespace braid::sockets
