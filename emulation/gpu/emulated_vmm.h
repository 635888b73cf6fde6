// The emulated GPU's shareable memory (gpu/runtime.h, vmmAlloc and the calls after it): what
// CUDA's virtual-memory API gives a process, modelled with the kernel's own objects.
//
//   cuMemCreate with a POSIX file descriptor handle   a memfd ("braid-vmm-p<device>-..."), sized
//                                                      to the granularity, its physical memory
//   cuMemAddressReserve + cuMemMap + cuMemSetAccess    an mmap of it, MAP_SHARED: an address
//   cuMemExportToShareableHandle                       a new descriptor of the memfd (dup)
//   cuMemImportFromShareableHandle + cuMemMap          a new mmap of the descriptor: a new address
//                                                      of the same memory, in any process
//
// So an exported handle is what CUDA's is, a file descriptor: its number means nothing in
// another process until the descriptor itself is passed there (SCM_RIGHTS over a Unix socket, as
// NCCL passes them); a mapping of a peer's handle is a new address in this process, and stays
// valid after the peer frees its own (the memory lives while any mapping does, as CUDA's lives
// until its last handle is released). Memory from deviceAlloc (cudaMalloc's, a named shm
// segment) is not shareable this way: vmmRange and vmmExport refuse it, as
// cuMemRetainAllocationHandle and cuMemExportToShareableHandle refuse legacy memory.
#pragma once

#include <cstddef>
#include <string>

#include "braid/status.h"

namespace braid::gpu {

/// What a real GPU's recommended granularity is (CU_MEM_ALLOC_GRANULARITY_RECOMMENDED: 2 MiB),
/// so that sizes round as they would there.
inline constexpr size_t kEmulatedVmmGranularity = size_t{2} << 20;

/// One mapping of a memfd, an allocation's or an import's, holding a descriptor of its own (an
/// import's caller keeps theirs). Unmapped, and its descriptor closed, when it goes.
class VmmMapping {
 public:
  /// A new memfd of `bytes` for the machine's device `physicalDevice`, mapped.
  static Result<VmmMapping> create(size_t bytes, int physicalDevice);
  /// The memfd behind `fd` mapped again; refused where `fd` is not an emulated GPU's exported
  /// handle or is not `bytes` long.
  static Result<VmmMapping> import(int fd, size_t bytes);
  VmmMapping(VmmMapping&& other) noexcept;
  VmmMapping& operator=(VmmMapping&&) = delete;
  VmmMapping(const VmmMapping&) = delete;
  ~VmmMapping();

  void* data() const { return base_; }
  size_t bytes() const { return bytes_; }
  /// The machine's device whose memory this is.
  int physicalDevice() const { return physicalDevice_; }
  /// A new descriptor of the memfd; the caller closes it.
  Result<int> exportHandle() const;

 private:
  VmmMapping(int ownedFd, void* base, size_t bytes, int physicalDevice)
      : ownedFd_(ownedFd), base_(base), bytes_(bytes), physicalDevice_(physicalDevice) {}

  int ownedFd_ = -1;
  void* base_ = nullptr;
  size_t bytes_ = 0;
  int physicalDevice_ = -1;
};

}  // namespace braid::gpu
