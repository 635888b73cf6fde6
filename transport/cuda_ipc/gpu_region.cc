// Regions one rank allocates and its peers map (gpu_region.h).
#include "transport/cuda_ipc/gpu_region.h"

#include <unistd.h>

#include <cstring>

namespace braid::transport::cuda_ipc {

const char* placementName(FifoPlacement placement) {
  return placement == FifoPlacement::kDeviceMemory ? "device memory" : "pinned host memory";
}

Result<std::unique_ptr<OwnedRegion>> OwnedRegion::create(gpu::Runtime& runtime,
                                                         FifoPlacement placement,
                                                         const std::string& pinnedName,
                                                         const std::vector<unsigned char>& image,
                                                         gpu::Stream stream) {
  const size_t bytes = image.size();
  RegionRecord record{};
  record.pid = static_cast<int32_t>(getpid());
  BRAID_ASSIGN_OR_RETURN(record.device, runtime.currentDevice());
  record.placement = static_cast<uint32_t>(placement);
  record.bytes = bytes;
  void* memory = nullptr;
  std::optional<shm::ShmSegment> pinned;
  if (placement == FifoPlacement::kDeviceMemory) {
    BRAID_ASSIGN_OR_RETURN(memory, runtime.deviceAlloc(bytes));
    Status laid = runtime.copy(memory, image.data(), bytes, stream);
    if (laid.ok()) laid = runtime.streamSynchronize(stream);
    Result<gpu::IpcHandle> h = laid.ok() ? runtime.ipcHandle(memory) : Result<gpu::IpcHandle>(laid);
    if (!h.ok()) {
      (void)runtime.deviceFree(memory);
      return h.status();
    }
    record.handle = h.value();
  } else {
    BRAID_ASSIGN_OR_RETURN(shm::ShmSegment segment, shm::ShmSegment::create(pinnedName, bytes));
    memcpy(segment.data(), image.data(), bytes);
    BRAID_TRY(runtime.hostRegister(segment.data(), bytes));
    memory = segment.data();
    pinned = std::move(segment);
  }
  record.address = reinterpret_cast<uint64_t>(memory);
  return std::unique_ptr<OwnedRegion>(
      new OwnedRegion(runtime, placement, memory, std::move(pinned), record));
}

OwnedRegion::~OwnedRegion() {
  if (placement_ == FifoPlacement::kDeviceMemory) {
    (void)runtime_.deviceFree(memory_);
  } else {
    (void)runtime_.hostUnregister(memory_);
  }
}

Result<std::unique_ptr<MappedRegion>> MappedRegion::open(gpu::Runtime& runtime,
                                                         const RegionRecord& r,
                                                         const std::string& pinnedName) {
  const auto placement = static_cast<FifoPlacement>(r.placement);
  void* memory = nullptr;
  std::optional<shm::ShmSegment> pinned;
  Mapping mapping = Mapping::kSameProcess;
  if (r.pid == static_cast<int32_t>(getpid())) {
    memory = reinterpret_cast<void*>(r.address);
    if (placement == FifoPlacement::kDeviceMemory) BRAID_TRY(runtime.enablePeerAccess(r.device));
  } else if (placement == FifoPlacement::kDeviceMemory) {
    BRAID_ASSIGN_OR_RETURN(memory, runtime.ipcOpen(r.handle));
    mapping = Mapping::kIpc;
  } else {
    BRAID_ASSIGN_OR_RETURN(shm::ShmSegment segment, shm::ShmSegment::open(pinnedName));
    if (segment.size() < r.bytes) {
      return invalidUsage("shm segment " + pinnedName + " is smaller than its record says");
    }
    BRAID_TRY(runtime.hostRegister(segment.data(), r.bytes));
    memory = segment.data();
    pinned = std::move(segment);
    mapping = Mapping::kPinned;
  }
  return std::unique_ptr<MappedRegion>(
      new MappedRegion(runtime, placement, mapping, memory, std::move(pinned)));
}

MappedRegion::~MappedRegion() {
  if (mapping_ == Mapping::kIpc) (void)runtime_.ipcClose(memory_);
  if (mapping_ == Mapping::kPinned) (void)runtime_.hostUnregister(memory_);
}

}  // namespace braid::transport::cuda_ipc
