// The unique id: packing, checking, and making one (see unique_id.h).
//
// A fresh id comes with a root thread in this process (ncclGetUniqueId runs
// on one rank, which then hands the bytes to the others). An id for a fixed
// address has no thread yet: rank 0 starts the root there during init, so
// every process can compute the id without talking to the others.
#include "bootstrap/unique_id.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <random>

#include "base/env.h"
#include "base/hash.h"
#include "base/hmac.h"
#include "base/log.h"
#include "base/socket.h"
#include "base/socket_address.h"
#include "base/socket_greeting.h"
#include "bootstrap/root.h"

namespace braid::bootstrap {
namespace {

void randomSecret(uint8_t* secret, size_t bytes) {
  std::random_device device;  // /dev/urandom on Linux
  for (size_t i = 0; i < bytes; i += sizeof(uint32_t)) {
    const uint32_t word = device();
    memcpy(secret + i, &word, std::min(sizeof(word), bytes - i));
  }
}

uint64_t randomMagic() {
  std::random_device device;  // /dev/urandom on Linux
  uint64_t magic = 0;
  while (magic == 0) {
    magic = (static_cast<uint64_t>(device()) << 32) ^ static_cast<uint64_t>(device());
  }
  return magic;
}

}  // namespace

sockaddr_storage rootAddress(const UniqueIdContents& contents) {
  sockaddr_storage addr{};
  if (contents.root.sa.sa_family == AF_INET) {
    memcpy(&addr, &contents.root.v4, sizeof(contents.root.v4));
  } else if (contents.root.sa.sa_family == AF_INET6) {
    memcpy(&addr, &contents.root.v6, sizeof(contents.root.v6));
  }
  return addr;
}

void setRootAddress(UniqueIdContents* contents, const sockaddr_storage& addr) {
  memset(&contents->root, 0, sizeof(contents->root));
  if (addr.ss_family == AF_INET) {
    memcpy(&contents->root.v4, &addr, sizeof(contents->root.v4));
  } else if (addr.ss_family == AF_INET6) {
    memcpy(&contents->root.v6, &addr, sizeof(contents->root.v6));
  }
}

UniqueId packUniqueId(const UniqueIdContents& contents) {
  UniqueId id;
  memset(id.bytes, 0, sizeof(id.bytes));
  memcpy(id.bytes, &contents, sizeof(contents));
  return id;
}

Result<UniqueIdContents> unpackUniqueId(const UniqueId& id) {
  UniqueIdContents contents;
  memcpy(&contents, id.bytes, sizeof(contents));
  if (contents.marker != kUniqueIdMarker) {
    return invalidArgument("not a braid unique id (was it made by ncclGetUniqueId of braid?)");
  }
  int family = contents.root.sa.sa_family;
  bool hasPort = (family == AF_INET && contents.root.v4.sin_port != 0) ||
                 (family == AF_INET6 && contents.root.v6.sin6_port != 0);
  if (!hasPort) {
    return invalidArgument("corrupt unique id: it names no root address");
  }
  return contents;
}

Result<UniqueId> createUniqueId(int64_t timeoutMs) {
  if (std::optional<std::string> commId = env::get("COMM_ID")) {
    Result<UniqueId> id = uniqueIdForAddress(*commId);
    if (!id.ok()) return id.status().withContext("BRAID_COMM_ID / NCCL_COMM_ID");
    return id;
  }
  UniqueIdContents contents{};
  contents.marker = kUniqueIdMarker;
  contents.flags = 0;
  contents.magic = randomMagic();
  randomSecret(contents.secret, sizeof(contents.secret));
  sockaddr_storage local = sockets::pickLocalAddress(env::get("SOCKET_IFNAME"));
  BRAID_ASSIGN_OR_RETURN(sockets::Socket listener, sockets::listenOn(local, /*reuseAddr=*/false));
  BRAID_ASSIGN_OR_RETURN(sockaddr_storage bound, sockets::boundAddress(listener));
  setRootAddress(&contents, bound);
  BRAID_TRY(startRoot(std::move(listener), contents, timeoutMs));
  UniqueId id = packUniqueId(contents);
  BRAID_INFO("unique id %s", describeUniqueId(id).c_str());
  return id;
}

Result<UniqueId> uniqueIdForAddress(const std::string& hostPort) {
  BRAID_ASSIGN_OR_RETURN(sockaddr_storage root, sockets::resolveHostPort(hostPort));
  UniqueIdContents contents{};
  contents.marker = kUniqueIdMarker;
  contents.flags = kRootStartedByRank0;
  // Derived from the resolved address, so "localhost:29500" and
  // "127.0.0.1:29500" agree, and every process computes the same magic.
  contents.magic = stableHash("braid:" + sockets::addressToString(root));
  if (contents.magic == 0) contents.magic = 1;
  setRootAddress(&contents, root);
  // Every process must compute the same secret without talking to the others: from a secret
  // the job's launcher gave every rank, else from the address, which anyone may know.
  const std::optional<std::string> shared = env::get("BOOTSTRAP_SECRET");
  const std::string seed = "braid-secret:" + (shared ? *shared : sockets::addressToString(root));
  const crypto::Digest d = crypto::sha256(seed.data(), seed.size());
  memcpy(contents.secret, d.data(), sizeof(contents.secret));
  if (!shared) {
    BRAID_INFO(
        "bootstrap: the id for %s is derived from its address: set BRAID_BOOTSTRAP_SECRET "
        "(the same on every rank) so that only the job's ranks can join",
        hostPort.c_str());
  }
  return packUniqueId(contents);
}

sockets::Proof proofOf(const UniqueIdContents& contents, ProofPurpose purpose) {
  sockets::Proof proof;
  memcpy(proof.secret.data(), contents.secret, proof.secret.size());
  proof.purpose = purpose;
  return proof;
}

std::string describeUniqueId(const UniqueId& id) {
  Result<UniqueIdContents> contents = unpackUniqueId(id);
  if (!contents.ok()) return "<not a braid unique id>";
  char magic[40];
  snprintf(magic, sizeof(magic), " magic=0x%016" PRIx64, contents.value().magic);
  std::string text = sockets::addressToString(rootAddress(contents.value())) + magic;
  if (contents.value().flags & kRootStartedByRank0) text += " (root started by rank 0)";
  return text;
}

}  // namespace braid::bootstrap
