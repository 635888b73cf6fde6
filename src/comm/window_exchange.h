// How the ranks of a window's registration learn each other's buffers and map them
// (comm/windows.h): one allGather of an offer per rank, then, between processes, each rank's
// shareable memory handle (a file descriptor) passed to the others over a Unix socket
// (SCM_RIGHTS, base/fd_passing.h) and mapped there at a new address. Ranks that are threads of
// one process pass nothing: a peer's buffer is at the peer's own pointer.
#pragma once

#include <cstdint>
#include <vector>

#include "base/deadline.h"
#include "base/fd_passing.h"
#include "braid/status.h"
#include "comm/members.h"
#include "gpu/runtime.h"

namespace braid::comm {

/// What each rank tells the others when a window is registered.
struct WindowOffer {
  int32_t pid = 0;
  int32_t shareable = 0;  ///< the buffer lies in shareable memory (ncclMemAlloc's)
  int32_t reached = 0;  ///< every GPU of the host's other ranks reaches this rank's by peer access
  int32_t flags = 0;    ///< the window flags it was given
  uint64_t buffer = 0;  ///< the buffer, in its own process
  uint64_t bytes = 0;   ///< the buffer's size
  uint64_t allocBytes = 0;  ///< the shareable allocation holding it
  uint64_t offset = 0;      ///< where the buffer starts in that allocation
  char listener[48] = {};   ///< where its handle is handed out (FdListener::name); empty: nowhere
};

/// Every rank's buffer as this process addresses it, by rank; and what was mapped to get there.
struct PeerBuffers {
  std::vector<char*> bases;
  std::vector<void*> mappings;  ///< imported mappings of other processes' allocations
};

/// Whether some rank of `members` runs in another process than this rank.
bool otherProcesses(const Members& members);

/// Maps every rank's buffer (collective: every rank calls it with the same offers): other
/// processes' allocations imported from the handles they pass, this process's ranks' buffers as
/// they are. `allocation` is this rank's allocation (exported to the other processes, over
/// `listener`). What was mapped is unmapped again if it fails.
Result<PeerBuffers> mapPeerBuffers(gpu::Runtime& runtime, const Members& members,
                                   const std::vector<WindowOffer>& offers, void* allocation,
                                   const sockets::FdListener* listener, const Deadline& deadline);

/// Unmaps what mapPeerBuffers mapped; the first failure is returned, every mapping tried.
Status unmapPeerBuffers(gpu::Runtime& runtime, const std::vector<void*>& mappings);

}  // namespace braid::comm
