#include "exec/peer_memory.h"

#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "kernels/host_reduce.h"

namespace braid::exec {
namespace {

// The kernel copies at most MAX_RW_COUNT (2 GiB less a page) per call, and
// may stop short at a page it cannot reach: both return a partial count, so
// every transfer loops until it has moved everything or made no progress.
template <typename Transfer>
Status transferAll(const PeerAddressSpace& peer, const char* verb, size_t bytes,
                   Transfer transfer) {
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = transfer(done, bytes - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const std::string why = n == 0 ? "no progress" : strerror(errno);
    return remoteError(std::string(verb) + " rank " + std::to_string(peer.rank) + " (pid " +
                       std::to_string(peer.pid) + ") failed after " + std::to_string(done) +
                       " of " + std::to_string(bytes) + " bytes: " + why);
  }
  return Status();
}

}  // namespace

Status readPeer(const PeerAddressSpace& peer, const void* remote, void* local, size_t bytes) {
  if (peer.sameProcess) {
    kernels::copyBytes(local, remote, bytes);
    return Status();
  }
  return transferAll(peer, "process_vm_readv from", bytes, [&](size_t at, size_t left) {
    iovec to{static_cast<char*>(local) + at, left};
    iovec from{const_cast<char*>(static_cast<const char*>(remote)) + at, left};
    return process_vm_readv(peer.pid, &to, 1, &from, 1, 0);
  });
}

Status writePeer(const PeerAddressSpace& peer, void* remote, const void* local, size_t bytes) {
  if (peer.sameProcess) {
    kernels::copyBytes(remote, local, bytes);
    return Status();
  }
  return transferAll(peer, "process_vm_writev to", bytes, [&](size_t at, size_t left) {
    iovec from{const_cast<char*>(static_cast<const char*>(local)) + at, left};
    iovec to{static_cast<char*>(remote) + at, left};
    return process_vm_writev(peer.pid, &from, 1, &to, 1, 0);
  });
}

Result<uint64_t> probePeerWord(pid_t pid, const void* remote) {
  uint64_t word = 0;
  iovec to{&word, sizeof(word)};
  iovec from{const_cast<void*>(remote), sizeof(word)};
  const ssize_t n = process_vm_readv(pid, &to, 1, &from, 1, 0);
  if (n == static_cast<ssize_t>(sizeof(word))) return word;
  return systemError(n < 0 ? strerror(errno) : "a short read");
}

}  // namespace braid::exec
