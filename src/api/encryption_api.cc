// ncclSetEncryption (2.32): the process-wide pre-shared key that seals braid's sockets
// (base/encryption_key.h; the seal itself is base/socket_seal.h, docs/network.md "Encryption").
//
// The config is read as NCCL 2.32 reads it (include/nccl.h's history names the sources): it must
// carry NCCL_API_MAGIC; as many bytes as its `size` says are taken, up to braid's struct; NULL or
// NCCL_ENCRYPTION_MODE_NONE clears the key; NCCL_ENCRYPTION_MODE_PSK needs a NUL-terminated key
// of at least 32 bytes. A key braid cannot use (no libcrypto.so.3) is an error, never a silent
// fall back to plaintext.
#include <algorithm>
#include <cstring>
#include <string>

#include "api/api_util.h"
#include "base/encryption_key.h"
#include "base/log.h"

using braid::api::report;

namespace {

/// The caller's config, as much of it as its size says (the rest from the initializer).
braid::Result<ncclEncryptionConfig_t> readConfig(const ncclEncryptionConfig_t* config) {
  ncclEncryptionConfig_t read = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  if (config == nullptr) return read;
  if (config->magic != NCCL_API_MAGIC) {
    return braid::invalidArgument(
        "ncclSetEncryption: the config was not initialized with "
        "NCCL_ENCRYPTION_CONFIG_INITIALIZER (its magic is wrong)");
  }
  if (config->size < offsetof(ncclEncryptionConfig_t, psk) + sizeof(const char*)) {
    return braid::invalidArgument("ncclSetEncryption: config->size is " +
                                  std::to_string(config->size) + ", too small to hold its key");
  }
  memcpy(&read, config, std::min(config->size, sizeof(read)));
  return read;
}

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclSetEncryption, const ncclEncryptionConfig_t* config) {
  braid::Result<ncclEncryptionConfig_t> read = readConfig(config);
  if (!read.ok()) return report(read.status());
  const ncclEncryptionConfig_t& c = read.value();
  if (c.mode == NCCL_ENCRYPTION_MODE_NONE) {
    braid::sockets::clearEncryptionKey();
    BRAID_INFO("ncclSetEncryption: sockets made from now on are not encrypted");
    return ncclSuccess;
  }
  if (c.mode != NCCL_ENCRYPTION_MODE_PSK) {
    return report(braid::invalidArgument("ncclSetEncryption: mode " + std::to_string(c.mode) +
                                         " is not NCCL_ENCRYPTION_MODE_NONE or _PSK"));
  }
  if (c.psk == nullptr) {
    return report(braid::invalidArgument(
        "ncclSetEncryption: NCCL_ENCRYPTION_MODE_PSK needs config->psk, and it is NULL"));
  }
  braid::Status set = braid::sockets::setEncryptionKey(c.psk, strlen(c.psk));
  if (!set.ok()) return report(set.withContext("ncclSetEncryption"));
  BRAID_INFO(
      "ncclSetEncryption: sockets made from now on are sealed with the pre-shared key "
      "(AES-256-GCM, keys by HKDF-SHA-256 per connection)");
  return ncclSuccess;
}
