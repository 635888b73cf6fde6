// Memory one rank allocates and its peers map, for GPU FIFOs (gpu_fifo.h)
// and the one-shot board (exec/device_one_shot.h):
//
//   kDeviceMemory  the owner's GPU memory. A peer in the same process uses
//                  the pointer (after enabling peer access when its GPU is
//                  another); one in another process maps it from its CUDA
//                  IPC handle. Two ranks on one GPU work either way.
//   kPinnedHost    a shm segment both processes map and pin (hostRegister),
//                  which kernels reach over PCIe: for GPUs that cannot reach
//                  each other.
//
// The owner describes its region in a RegionRecord, which travels inside a
// record of its user's (a shm segment both sides name alike); the peer maps
// the region from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "braid/status.h"
#include "gpu/runtime.h"
#include "transport/shm/shm_segment.h"

namespace braid::transport::cuda_ipc {

enum class FifoPlacement {
  kDeviceMemory,
  kPinnedHost,
};

const char* placementName(FifoPlacement placement);

/// How a peer reaches a region: plain data, copied into shared memory.
struct RegionRecord {
  int32_t pid;  ///< the owner's process
  int32_t device;
  uint32_t placement;  ///< FifoPlacement
  uint32_t reserved;
  uint64_t bytes;
  uint64_t address;  ///< in the owner's process
  gpu::IpcHandle handle;
};

/// A region this rank allocated; freed with it.
class OwnedRegion {
 public:
  /// Allocates image.size() bytes on the current device (or a pinned shm
  /// segment named `pinnedName`), copies `image` into it (on `stream`,
  /// waiting for it) and describes it for peers.
  static Result<std::unique_ptr<OwnedRegion>> create(gpu::Runtime& runtime, FifoPlacement placement,
                                                     const std::string& pinnedName,
                                                     const std::vector<unsigned char>& image,
                                                     gpu::Stream stream);
  OwnedRegion(const OwnedRegion&) = delete;
  OwnedRegion& operator=(const OwnedRegion&) = delete;
  ~OwnedRegion();

  void* data() const { return memory_; }
  FifoPlacement placement() const { return placement_; }
  const RegionRecord& record() const { return record_; }

 private:
  OwnedRegion(gpu::Runtime& runtime, FifoPlacement placement, void* memory,
              std::optional<shm::ShmSegment> pinned, const RegionRecord& record)
      : runtime_(runtime),
        placement_(placement),
        memory_(memory),
        pinned_(std::move(pinned)),
        record_(record) {}

  gpu::Runtime& runtime_;
  FifoPlacement placement_;
  void* memory_;
  std::optional<shm::ShmSegment> pinned_;
  RegionRecord record_;
};

/// A peer's region mapped into this process; unmapped with it.
class MappedRegion {
 public:
  /// Maps the region `record` describes; `pinnedName` names its segment
  /// when it is pinned host memory.
  static Result<std::unique_ptr<MappedRegion>> open(gpu::Runtime& runtime,
                                                    const RegionRecord& record,
                                                    const std::string& pinnedName);
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;
  ~MappedRegion();

  void* data() const { return memory_; }
  FifoPlacement placement() const { return placement_; }

 private:
  enum class Mapping { kSameProcess, kIpc, kPinned };
  MappedRegion(gpu::Runtime& runtime, FifoPlacement placement, Mapping mapping, void* memory,
               std::optional<shm::ShmSegment> pinned)
      : runtime_(runtime),
        placement_(placement),
        mapping_(mapping),
        memory_(memory),
        pinned_(std::move(pinned)) {}

  gpu::Runtime& runtime_;
  FifoPlacement placement_;
  Mapping mapping_;
  void* memory_;
  std::optional<shm::ShmSegment> pinned_;
};

}  // namespace braid::transport::cuda_ipc
