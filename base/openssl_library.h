// The few functions of OpenSSL 3's libcrypto that sealed sockets use (socket_seal.h): AES-256-GCM,
// HKDF-SHA-256 and the system's random bytes. libcrypto.so.3 is opened with dlopen at the first
// use, as libibverbs and NVML are (DESIGN.md, "a good guest"): libnccl.so.2 loads and runs
// unencrypted on a machine without it, and only ncclSetEncryption fails there, with the dynamic
// linker's words.
//
// The types are declared here as opaque pointers, with the constants OpenSSL 3 fixes in its ABI,
// so that building braid needs no OpenSSL headers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "braid/status.h"

namespace braid::crypto {

/// libcrypto's entry points braid calls, with OpenSSL's own signatures (opaque handles as void*).
struct OpenSsl {
  // EVP_CIPHER_CTX and the AEAD.
  void* (*cipherCtxNew)();
  void (*cipherCtxFree)(void* ctx);
  const void* (*aes256Gcm)();
  int (*encryptInit)(void* ctx, const void* cipher, void* engine, const unsigned char* key,
                     const unsigned char* iv);
  int (*encryptUpdate)(void* ctx, unsigned char* out, int* outl, const unsigned char* in, int inl);
  int (*encryptFinal)(void* ctx, unsigned char* out, int* outl);
  int (*decryptInit)(void* ctx, const void* cipher, void* engine, const unsigned char* key,
                     const unsigned char* iv);
  int (*decryptUpdate)(void* ctx, unsigned char* out, int* outl, const unsigned char* in, int inl);
  int (*decryptFinal)(void* ctx, unsigned char* out, int* outl);
  int (*cipherCtxCtrl)(void* ctx, int type, int arg, void* ptr);
  // HKDF through EVP_PKEY_CTX.
  void* (*pkeyCtxNewId)(int id, void* engine);
  void (*pkeyCtxFree)(void* ctx);
  int (*deriveInit)(void* ctx);
  int (*setHkdfMd)(void* ctx, const void* md);
  int (*setHkdfSalt)(void* ctx, const unsigned char* salt, int saltLen);
  int (*setHkdfKey)(void* ctx, const unsigned char* key, int keyLen);
  int (*addHkdfInfo)(void* ctx, const unsigned char* info, int infoLen);
  int (*derive)(void* ctx, unsigned char* key, size_t* keyLen);
  const void* (*sha256)();
  // Random bytes and wiping.
  int (*randBytes)(unsigned char* buf, int num);
  void (*cleanse)(void* ptr, size_t len);

  // OpenSSL 3's values (evp.h, obj_mac.h).
  static constexpr int kCtrlGcmGetTag = 0x10;
  static constexpr int kCtrlGcmSetTag = 0x11;
  static constexpr int kPkeyHkdf = 1036;
};

/// libcrypto.so.3, opened once per process (kept open until exit); an error that names the
/// library and what the dynamic linker said where it cannot be opened or lacks a function.
Result<const OpenSsl*> openSsl();

}  // namespace braid::crypto
