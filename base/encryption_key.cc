// The process-wide pre-shared key (encryption_key.h).
#include "base/encryption_key.h"

#include <mutex>
#include <string>

#include "base/openssl_library.h"

namespace braid::sockets {
namespace {

std::mutex& keyMutex() {
  static std::mutex m;
  return m;
}
std::shared_ptr<const PreSharedKey>& currentKey() {
  static std::shared_ptr<const PreSharedKey> key;
  return key;
}

}  // namespace

PreSharedKey::~PreSharedKey() {
  // Wiped with the library's cleanse where it is loaded (it always is once a key was set).
  Result<const crypto::OpenSsl*> ssl = crypto::openSsl();
  if (ssl.ok() && !bytes.empty()) ssl.value()->cleanse(bytes.data(), bytes.size());
}

Status setEncryptionKey(const void* key, size_t bytes) {
  if (bytes < kMinKeyBytes) {
    return invalidArgument("an encryption key must have at least " + std::to_string(kMinKeyBytes) +
                           " bytes; this one has " + std::to_string(bytes));
  }
  Result<const crypto::OpenSsl*> ssl = crypto::openSsl();
  if (!ssl.ok()) {
    return systemError("encryption needs OpenSSL 3's libcrypto, and " + ssl.status().message());
  }
  auto made = std::make_shared<PreSharedKey>();
  const auto* p = static_cast<const uint8_t*>(key);
  made->bytes.assign(p, p + bytes);
  std::lock_guard<std::mutex> lock(keyMutex());
  currentKey() = std::move(made);
  return Status::success();
}

void clearEncryptionKey() {
  std::lock_guard<std::mutex> lock(keyMutex());
  currentKey().reset();
}

std::shared_ptr<const PreSharedKey> encryptionKey() {
  std::lock_guard<std::mutex> lock(keyMutex());
  return currentKey();
}

}  // namespace braid::sockets
