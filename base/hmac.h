// HMAC-SHA-256 (FIPS 180-4, RFC 2104): how a rank proves it holds its communicator's secret
// without sending it (the bootstrap's and the watcher's greetings, bootstrap/auth.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace braid::crypto {

using Digest = std::array<uint8_t, 32>;

/// SHA-256 of `bytes` bytes, fed in any number of pieces.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t bytes);
  Digest finish();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t length_ = 0;  ///< bytes fed so far
};

Digest sha256(const void* data, size_t bytes);

/// HMAC-SHA-256 of a message given as up to three pieces (absent pieces: null, 0).
Digest hmacSha256(const void* key, size_t keyBytes, const void* a, size_t aBytes,
                  const void* b = nullptr, size_t bBytes = 0, const void* c = nullptr,
                  size_t cBytes = 0);

/// Compares in time that does not depend on where the bytes first differ.
bool equalInConstantTime(const void* a, const void* b, size_t bytes);

}  // namespace braid::crypto
