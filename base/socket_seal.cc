// SocketSeal: keys derived by HKDF, frames sealed and opened by AES-256-GCM (socket_seal.h).
#include "base/socket_seal.h"

#include <errno.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "base/openssl_library.h"

namespace braid::sockets {
namespace {

const crypto::OpenSsl& ssl() {
  // make() succeeded, so the library is open.
  return *crypto::openSsl().value();
}

/// HKDF-SHA-256(key, salt, info) into `out`.
bool hkdf(const PreSharedKey& key, const uint8_t* salt, size_t saltBytes, const std::string& info,
          uint8_t* out, size_t outBytes) {
  const crypto::OpenSsl& s = ssl();
  void* ctx = s.pkeyCtxNewId(crypto::OpenSsl::kPkeyHkdf, nullptr);
  if (ctx == nullptr) return false;
  size_t length = outBytes;
  const bool ok = s.deriveInit(ctx) > 0 && s.setHkdfMd(ctx, s.sha256()) > 0 &&
                  s.setHkdfSalt(ctx, salt, static_cast<int>(saltBytes)) > 0 &&
                  s.setHkdfKey(ctx, key.bytes.data(), static_cast<int>(key.bytes.size())) > 0 &&
                  s.addHkdfInfo(ctx, reinterpret_cast<const unsigned char*>(info.data()),
                                static_cast<int>(info.size())) > 0 &&
                  s.derive(ctx, out, &length) > 0 && length == outBytes;
  s.pkeyCtxFree(ctx);
  return ok;
}

uint32_t frameLength(const char* header) {
  const auto* p = reinterpret_cast<const uint8_t*>(header);
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace

std::array<uint8_t, 12> SocketSeal::Direction::nextNonce() {
  std::array<uint8_t, 12> nonce = iv;
  for (int i = 0; i < 8; ++i) nonce[11 - i] ^= static_cast<uint8_t>(frames >> (8 * i));
  ++frames;
  return nonce;
}

Result<std::unique_ptr<SocketSeal>> SocketSeal::make(const PreSharedKey& key, Role role,
                                                     const SealNonce& listenerNonce,
                                                     const SealNonce& connectorNonce) {
  Result<const crypto::OpenSsl*> loaded = crypto::openSsl();
  if (!loaded.ok()) return loaded.status();
  const crypto::OpenSsl& s = *loaded.value();
  std::unique_ptr<SocketSeal> seal(new SocketSeal());
  uint8_t salt[2 * kSealNonceBytes];
  memcpy(salt, listenerNonce.data(), kSealNonceBytes);
  memcpy(salt + kSealNonceBytes, connectorNonce.data(), kSealNonceBytes);
  // Each direction its own key and IV: a frame reflected back to its sender does not open.
  Direction& fromListener = role == Role::kListener ? seal->out_ : seal->in_;
  Direction& fromConnector = role == Role::kListener ? seal->in_ : seal->out_;
  for (auto [direction, label] : {std::pair{&fromListener, "listener to connector"},
                                  std::pair{&fromConnector, "connector to listener"}}) {
    uint8_t material[32 + 12];
    if (!hkdf(key, salt, sizeof(salt), std::string("braid socket seal v1, ") + label, material,
              sizeof(material))) {
      return systemError("encryption: HKDF-SHA-256 failed in libcrypto");
    }
    memcpy(direction->key.data(), material, 32);
    memcpy(direction->iv.data(), material + 32, 12);
    s.cleanse(material, sizeof(material));
  }
  seal->out_.ctx = s.cipherCtxNew();
  seal->in_.ctx = s.cipherCtxNew();
  if (seal->out_.ctx == nullptr || seal->in_.ctx == nullptr ||
      s.encryptInit(seal->out_.ctx, s.aes256Gcm(), nullptr, seal->out_.key.data(), nullptr) <= 0 ||
      s.decryptInit(seal->in_.ctx, s.aes256Gcm(), nullptr, seal->in_.key.data(), nullptr) <= 0) {
    return systemError("encryption: AES-256-GCM could not be set up in libcrypto");
  }
  return seal;
}

SocketSeal::~SocketSeal() {
  const crypto::OpenSsl& s = ssl();
  for (Direction* d : {&out_, &in_}) {
    if (d->ctx != nullptr) s.cipherCtxFree(d->ctx);
    s.cleanse(d->key.data(), d->key.size());
    s.cleanse(d->iv.data(), d->iv.size());
  }
  if (!plain_.empty()) s.cleanse(plain_.data(), plain_.size());
}

size_t SocketSeal::sealFrame(const void* a, size_t aBytes, const void* b, size_t bBytes,
                             std::vector<char>* frame) {
  const crypto::OpenSsl& s = ssl();
  const size_t take = std::min(aBytes + bBytes, kSealMaxFrameBytes);
  const size_t fromA = std::min(aBytes, take);
  frame->resize(kSealHeaderBytes + take + kSealTagBytes);
  auto* out = reinterpret_cast<unsigned char*>(frame->data());
  for (int i = 0; i < 4; ++i) out[i] = static_cast<unsigned char>(take >> (8 * i));
  const std::array<uint8_t, 12> nonce = out_.nextNonce();
  int n = 0;
  unsigned char* cipher = out + kSealHeaderBytes;
  bool ok = s.encryptInit(out_.ctx, nullptr, nullptr, nullptr, nonce.data()) > 0 &&
            s.encryptUpdate(out_.ctx, nullptr, &n, out, kSealHeaderBytes) > 0 &&
            s.encryptUpdate(out_.ctx, cipher, &n, static_cast<const unsigned char*>(a),
                            static_cast<int>(fromA)) > 0;
  if (ok && take > fromA) {
    ok = s.encryptUpdate(out_.ctx, cipher + fromA, &n, static_cast<const unsigned char*>(b),
                         static_cast<int>(take - fromA)) > 0;
  }
  ok = ok && s.encryptFinal(out_.ctx, cipher + take, &n) > 0 &&
       s.cipherCtxCtrl(out_.ctx, crypto::OpenSsl::kCtrlGcmGetTag, kSealTagBytes, cipher + take) > 0;
  if (!ok) {
    broken_ = true;
    return 0;
  }
  return take;
}

bool SocketSeal::openFrame(const char* frame, size_t frameBytes, char* plain) {
  const crypto::OpenSsl& s = ssl();
  const auto* in = reinterpret_cast<const unsigned char*>(frame);
  const size_t length = frameBytes - kSealHeaderBytes - kSealTagBytes;
  const std::array<uint8_t, 12> nonce = in_.nextNonce();
  uint8_t tag[kSealTagBytes];
  memcpy(tag, in + kSealHeaderBytes + length, kSealTagBytes);
  int n = 0;
  auto* out = reinterpret_cast<unsigned char*>(plain);
  return s.decryptInit(in_.ctx, nullptr, nullptr, nullptr, nonce.data()) > 0 &&
         s.decryptUpdate(in_.ctx, nullptr, &n, in, kSealHeaderBytes) > 0 &&
         (length == 0 ||
          s.decryptUpdate(in_.ctx, out, &n, in + kSealHeaderBytes, static_cast<int>(length)) > 0) &&
         s.cipherCtxCtrl(in_.ctx, crypto::OpenSsl::kCtrlGcmSetTag, kSealTagBytes, tag) > 0 &&
         s.decryptFinal(in_.ctx, out + length, &n) > 0;
}

ssize_t SocketSeal::send(int fd, const void* a, size_t aBytes, const void* b, size_t bBytes) {
  if (broken_) {
    errno = kUnauthenticErrno;
    return -1;
  }
  if (sending_.empty()) {
    sendingPlain_ = sealFrame(a, aBytes, b, bBytes, &sending_);
    sendingSent_ = 0;
    if (broken_) {
      sending_.clear();
      errno = EIO;
      return -1;
    }
  }
  while (sendingSent_ < sending_.size()) {
    const ssize_t n = ::send(fd, sending_.data() + sendingSent_, sending_.size() - sendingSent_,
                             MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      sendingSent_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n;  // EAGAIN: the frame stays, to be finished by the next call
  }
  sending_.clear();
  return static_cast<ssize_t>(sendingPlain_);
}

bool SocketSeal::readFrameBytes(int fd, ssize_t* result) {
  // Never past the frame's end, so that a frame's successor waits in the kernel, where a poll on
  // the socket sees it.
  while (true) {
    size_t want = kSealHeaderBytes;
    if (arrivingHave_ >= kSealHeaderBytes) {
      const uint32_t length = frameLength(arriving_.data());
      if (length > kSealMaxFrameBytes) {
        broken_ = true;
        errno = kUnauthenticErrno;
        *result = -1;
        return false;
      }
      want = kSealHeaderBytes + length + kSealTagBytes;
    }
    if (arrivingHave_ == want && want > kSealHeaderBytes) return true;
    if (arriving_.size() < want) arriving_.resize(want);
    const ssize_t n =
        ::recv(fd, arriving_.data() + arrivingHave_, want - arrivingHave_, MSG_DONTWAIT);
    if (n > 0) {
      arrivingHave_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    *result = n;
    return false;
  }
}

size_t SocketSeal::bytesToFrameEnd() const {
  if (arrivingHave_ < kSealHeaderBytes) return kSealHeaderBytes - arrivingHave_;
  const size_t length = std::min<size_t>(frameLength(arriving_.data()), kSealMaxFrameBytes);
  return kSealHeaderBytes + length + kSealTagBytes - arrivingHave_;
}

ssize_t SocketSeal::recv(int fd, void* data, size_t bytes) {
  while (true) {
    if (broken_) {
      errno = kUnauthenticErrno;
      return -1;
    }
    if (hasPlaintext()) {
      const size_t n = std::min(bytes, plain_.size() - plainRead_);
      memcpy(data, plain_.data() + plainRead_, n);
      plainRead_ += n;
      if (plainRead_ == plain_.size()) {
        plain_.clear();
        plainRead_ = 0;
      }
      return static_cast<ssize_t>(n);
    }
    ssize_t result = 0;
    if (!readFrameBytes(fd, &result)) return result;
    const size_t length = frameLength(arriving_.data());
    const size_t frameBytes = arrivingHave_;
    arrivingHave_ = 0;
    // Straight into the caller's buffer where the whole frame fits there.
    char* into = data != nullptr && bytes >= length ? static_cast<char*>(data) : nullptr;
    if (into == nullptr) {
      plain_.resize(length);
      into = plain_.data();
    }
    if (!openFrame(arriving_.data(), frameBytes, into)) {
      broken_ = true;
      plain_.clear();
      continue;
    }
    if (into == data && length > 0) return static_cast<ssize_t>(length);
  }
}

}  // namespace braid::sockets
