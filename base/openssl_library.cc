// openSsl(): libcrypto.so.3 opened with dlopen, its functions found by name (openssl_library.h).
#include "base/openssl_library.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace braid::crypto {
namespace {

constexpr const char* kLibrary = "libcrypto.so.3";

/// Finds `name` in `library` and stores it in `*slot`; false (with *error set) when it is absent.
template <typename Fn>
bool bind(void* library, const char* name, Fn* slot, std::string* error) {
  void* symbol = dlsym(library, name);
  if (symbol == nullptr) {
    *error = std::string(kLibrary) + " has no " + name + " (OpenSSL 3 is needed)";
    return false;
  }
  *slot = reinterpret_cast<Fn>(symbol);
  return true;
}

bool bindAll(void* l, OpenSsl* s, std::string* e) {
  return bind(l, "EVP_CIPHER_CTX_new", &s->cipherCtxNew, e) &&
         bind(l, "EVP_CIPHER_CTX_free", &s->cipherCtxFree, e) &&
         bind(l, "EVP_aes_256_gcm", &s->aes256Gcm, e) &&
         bind(l, "EVP_EncryptInit_ex", &s->encryptInit, e) &&
         bind(l, "EVP_EncryptUpdate", &s->encryptUpdate, e) &&
         bind(l, "EVP_EncryptFinal_ex", &s->encryptFinal, e) &&
         bind(l, "EVP_DecryptInit_ex", &s->decryptInit, e) &&
         bind(l, "EVP_DecryptUpdate", &s->decryptUpdate, e) &&
         bind(l, "EVP_DecryptFinal_ex", &s->decryptFinal, e) &&
         bind(l, "EVP_CIPHER_CTX_ctrl", &s->cipherCtxCtrl, e) &&
         bind(l, "EVP_PKEY_CTX_new_id", &s->pkeyCtxNewId, e) &&
         bind(l, "EVP_PKEY_CTX_free", &s->pkeyCtxFree, e) &&
         bind(l, "EVP_PKEY_derive_init", &s->deriveInit, e) &&
         bind(l, "EVP_PKEY_CTX_set_hkdf_md", &s->setHkdfMd, e) &&
         bind(l, "EVP_PKEY_CTX_set1_hkdf_salt", &s->setHkdfSalt, e) &&
         bind(l, "EVP_PKEY_CTX_set1_hkdf_key", &s->setHkdfKey, e) &&
         bind(l, "EVP_PKEY_CTX_add1_hkdf_info", &s->addHkdfInfo, e) &&
         bind(l, "EVP_PKEY_derive", &s->derive, e) && bind(l, "EVP_sha256", &s->sha256, e) &&
         bind(l, "RAND_bytes", &s->randBytes, e) && bind(l, "OPENSSL_cleanse", &s->cleanse, e);
}

}  // namespace

Result<const OpenSsl*> openSsl() {
  // Opened once; a failure is remembered too, so that every caller gets the same answer.
  static std::once_flag once;
  static OpenSsl table{};
  static std::string error;
  std::call_once(once, [] {
    void* library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* why = dlerror();
      error = std::string("cannot open ") + kLibrary + ": " + (why ? why : "unknown error");
      return;
    }
    if (!bindAll(library, &table, &error)) dlclose(library);
  });
  if (!error.empty()) return systemError(error);
  return &table;
}

}  // namespace braid::crypto
