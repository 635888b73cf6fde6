// Host memory that other processes of this machine can map: what ncclMemAlloc hands out where
// there is no GPU, so that the zero-copy collectives (src/exec/zero_copy.h) read and write a
// peer's buffers with plain loads and stores instead of the kernel's cross-memory copies.
//
// Each allocation is a memfd of its own, mapped shared. A peer maps it by opening the owner's
// descriptor through /proc/<pid>/fd/<fd>, which the kernel allows under the same ptrace check
// as process_vm_readv; the zero-copy board's creation probe has asked that question already.
// The registry is per process and thread-safe; ids are never reused, so a peer's mapping of
// a freed allocation is never mistaken for a new one at the same address.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "braid/status.h"

namespace braid::transport::shm {

/// Where a byte range lies in a shared allocation, as a peer needs to map it.
struct SharedRange {
  uint64_t id = 0;        ///< the allocation's, unique in this process; 0 = not shared
  int32_t fd = -1;        ///< its memfd in the owner process
  uint64_t mapBytes = 0;  ///< the allocation's size (what a peer maps)
  uint64_t offset = 0;    ///< of the range's first byte from the allocation's start
};

/// `bytes` (> 0) of zeroed memory from a memfd of its own, mapped shared.
Result<void*> allocSharedHost(size_t bytes);
/// Unmaps and closes an allocation from allocSharedHost; false when `ptr` is not one.
bool freeSharedHost(void* ptr);
/// The allocation holding [ptr, ptr + bytes), if there is one.
std::optional<SharedRange> findSharedHost(const void* ptr, size_t bytes);

/// A peer's allocation mapped into this process.
class PeerMapping {
 public:
  /// Opens /proc/<pid>/fd/<range.fd> and maps range.mapBytes of it.
  static Result<PeerMapping> open(pid_t pid, const SharedRange& range);
  PeerMapping(PeerMapping&& other) noexcept;
  PeerMapping& operator=(PeerMapping&& other) noexcept;
  PeerMapping(const PeerMapping&) = delete;
  PeerMapping& operator=(const PeerMapping&) = delete;
  ~PeerMapping();

  char* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  PeerMapping(char* data, size_t bytes) : data_(data), bytes_(bytes) {}
  char* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace braid::transport::shm
