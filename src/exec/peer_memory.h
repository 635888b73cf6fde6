// Reading and writing another rank's memory in place: cross-memory attach.
//
// The zero-copy collectives (zero_copy.h) move a peer's bytes with one copy
// from its buffer to ours, or from ours to its buffer, instead of the FIFOs'
// two (the sender's into a shared slot, the receiver's out of it). Linux
// gives that copy to any process that may ptrace the peer:
// process_vm_readv / process_vm_writev copy between the two address spaces
// in the kernel, page by page, with no mapping kept afterwards. Ranks that
// are threads of one process need no syscall: their buffers are in our
// address space already, and a plain copy does it.
//
// Where the kernel refuses (Yama's ptrace_scope at 2 or 3, a seccomp
// filter, ranks in different PID namespaces or containers), a probe at
// creation finds out and the collectives keep their FIFOs.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "braid/status.h"

namespace braid::exec {

/// How this rank reaches one peer's memory.
struct PeerAddressSpace {
  pid_t pid = 0;
  /// The peer is a thread of this process: its addresses are ours, copy directly.
  bool sameProcess = false;
  int rank = -1;  ///< for error messages
};

/// local = the peer's `bytes` at `remote`. Errors name the peer and errno.
Status readPeer(const PeerAddressSpace& peer, const void* remote, void* local, size_t bytes);

/// The peer's `bytes` at `remote` = local.
Status writePeer(const PeerAddressSpace& peer, void* remote, const void* local, size_t bytes);

/// Reads 8 bytes at `remote` of process `pid` with process_vm_readv (never
/// directly, even for our own pid, so a wrong address is an error and not a
/// fault): the creation probe. Returns errno's text on failure.
Result<uint64_t> probePeerWord(pid_t pid, const void* remote);

}  // namespace braid::exec
