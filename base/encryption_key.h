// The process-wide pre-shared key of ncclSetEncryption: while one is set, every connection that
// braid makes or accepts with a greeting (socket_greeting.h) is sealed with keys derived from it
// (socket_seal.h). Like NCCL's, the setting is read as each connection is made: set it before the
// first communicator or unique id, and keep it for the job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "braid/status.h"

namespace braid::sockets {

/// A pre-shared key's bytes, wiped when the last connection that holds it lets go.
struct PreSharedKey {
  std::vector<uint8_t> bytes;
  PreSharedKey() = default;
  PreSharedKey(const PreSharedKey&) = delete;
  PreSharedKey& operator=(const PreSharedKey&) = delete;
  ~PreSharedKey();
};

/// The shortest key accepted, as NCCL's (a string of at least 32 bytes).
inline constexpr size_t kMinKeyBytes = 32;

/// Sets the key new connections are sealed with. Fails (and keeps the setting as it was) where
/// the key is shorter than kMinKeyBytes or libcrypto.so.3 cannot be loaded.
Status setEncryptionKey(const void* key, size_t bytes);
/// New connections go unsealed again.
void clearEncryptionKey();
/// The key new connections are sealed with; null while none is set.
std::shared_ptr<const PreSharedKey> encryptionKey();

}  // namespace braid::sockets
