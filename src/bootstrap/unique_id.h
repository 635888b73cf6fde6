// The unique id: 128 opaque bytes (ncclUniqueId) that tell every rank where
// the bootstrap root listens and which communicator it is joining.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "base/socket_greeting.h"
#include "braid/comm.h"
#include "braid/status.h"

namespace braid::bootstrap {

inline constexpr size_t kUniqueIdBytes = sizeof(::braid::UniqueId);

/// Same size and layout as ncclUniqueId (defined in the public API).
using UniqueId = ::braid::UniqueId;

/// Where the root listens, IPv4 or IPv6. Not a sockaddr_storage: that alone
/// is 128 bytes and would not fit next to the other fields.
union RootAddress {
  sockaddr sa;
  sockaddr_in v4;
  sockaddr_in6 v6;
};

/// What braid stores inside the 128 bytes.
struct UniqueIdContents {
  uint32_t marker;   ///< kUniqueIdMarker: tells a braid id from garbage
  uint32_t flags;    ///< kRootStartedByRank0, ...
  uint64_t magic;    ///< random per id; all ranks of one comm share it
  RootAddress root;  ///< where the root listens (IPv4 or IPv6)
  /// What every connection of the communicator proves it knows (base/socket_greeting.h's Proof):
  /// random for an id from ncclGetUniqueId, so only the processes it was handed to can join; for an
  /// id of a fixed address, derived from BRAID_BOOTSTRAP_SECRET where every rank sets it the
  /// same, else from the address (which then authenticates nothing: see docs/reliability.md).
  uint8_t secret[16];
};
static_assert(sizeof(UniqueIdContents) <= kUniqueIdBytes, "unique id contents must fit");

inline constexpr uint32_t kUniqueIdMarker = 0x62726964;  // "brid"
/// The id names an address given by the user (BRAID_COMM_ID, MASTER_ADDR):
/// rank 0 starts the root listener there during init.
inline constexpr uint32_t kRootStartedByRank0 = 1u;

/// The root address as a sockaddr_storage (what the socket helpers take), and back.
sockaddr_storage rootAddress(const UniqueIdContents& contents);
void setRootAddress(UniqueIdContents* contents, const sockaddr_storage& addr);

/// Packs / unpacks the contents; unpack fails on an id braid did not make.
UniqueId packUniqueId(const UniqueIdContents& contents);
Result<UniqueIdContents> unpackUniqueId(const UniqueId& id);

/// ncclGetUniqueId: when BRAID_COMM_ID (or NCCL_COMM_ID) = host:port is set,
/// returns an id for that address (rank 0 will listen there); otherwise
/// starts a root listener thread in this process on an ephemeral port of
/// this host's address and returns an id naming it. `timeoutMs` bounds how
/// long the root waits for all ranks (<= 0: forever).
Result<UniqueId> createUniqueId(int64_t timeoutMs);

/// An id for a fixed "host:port" (IPv4, IPv6 in [brackets], or a name),
/// with a magic derived from the address so every process computes the same
/// id; rank 0 starts the root there. Used for BRAID_COMM_ID and launchers.
Result<UniqueId> uniqueIdForAddress(const std::string& hostPort);

/// What a connection of this communicator opening for `purpose` proves (base/socket_greeting.h).
enum ProofPurpose : uint32_t {
  kProveRootHello = 1,  ///< a rank's Hello to the root
  kProveBootstrapRing = 2,
  kProveWatchRing = 3,  ///< watch/peer_watch.h
  kProveWatchLetter = 4,
  kProveSocketFifo = 5,  ///< transport/net/socket_rendezvous.h
};
sockets::Proof proofOf(const UniqueIdContents& contents, ProofPurpose purpose);

/// Human-readable "1.2.3.4:5678 magic=0x..." for logs.
std::string describeUniqueId(const UniqueId& id);

}  // namespace braid::bootstrap
