// EmulatedMemory's shareable memory (emulated_vmm.h): allocations and imports kept among the
// other ranges, so that pointerInfo, copies and the checks of device buffers see device memory.
#include <unistd.h>

#include <algorithm>

#include "emulation/gpu/emulated_memory.h"

namespace braid::gpu {

Result<void*> EmulatedMemory::vmmAlloc(size_t bytes, int device, int physicalDevice) {
  if (bytes == 0) return invalidArgument("emulated GPU: cuMemCreate of 0 bytes");
  const size_t rounded =
      (bytes + kEmulatedVmmGranularity - 1) / kEmulatedVmmGranularity * kEmulatedVmmGranularity;
  BRAID_ASSIGN_OR_RETURN(VmmMapping mapping, VmmMapping::create(rounded, physicalDevice));
  return keepMapping(std::move(mapping), Origin::kVmmAlloc, device);
}

void* EmulatedMemory::keepMapping(VmmMapping mapping, Origin origin, int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  Range r;
  r.bytes = mapping.bytes();
  r.origin = origin;
  r.device = device;
  r.vmm = std::make_unique<VmmMapping>(std::move(mapping));
  void* p = r.vmm->data();
  ranges_.emplace(reinterpret_cast<uintptr_t>(p), std::move(r));
  return p;
}

Status EmulatedMemory::vmmFree(void* base) {
  if (base == nullptr) return invalidArgument("emulated GPU: vmmFree of NULL");
  return release(base, Origin::kVmmAlloc, "vmmFree (cuMemUnmap, cuMemRelease)");
}

Result<VmmRange> EmulatedMemory::vmmRange(const void* pointer, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto at = reinterpret_cast<uintptr_t>(pointer);
  auto it = ranges_.upper_bound(at);
  if (it != ranges_.begin()) --it;
  const bool inside = it != ranges_.end() && at >= it->first && at < it->first + it->second.bytes;
  const bool shareable =
      inside && (it->second.origin == Origin::kVmmAlloc || it->second.origin == Origin::kVmmImport);
  if (!shareable) {
    return Status(ErrorCode::kCudaError,
                  "emulated GPU: the memory at " + std::to_string(at) +
                      " is not shareable device memory (cuMemRetainAllocationHandle: "
                      "CUDA_ERROR_INVALID_VALUE): it was not made by cuMemCreate (ncclMemAlloc), "
                      "as cudaMalloc'd and host memory are not");
  }
  if (bytes > it->first + it->second.bytes - at) {
    return Status(ErrorCode::kCudaError,
                  "emulated GPU: " + std::to_string(bytes) +
                      " bytes from there leave the shareable allocation of " +
                      std::to_string(it->second.bytes) + " that holds their start");
  }
  return VmmRange{reinterpret_cast<void*>(it->first), it->second.bytes};
}

Result<int> EmulatedMemory::vmmExport(void* base) {
  std::lock_guard<std::mutex> lock(mutex_);
  Range* r = exact(base, Origin::kVmmAlloc);
  if (r == nullptr) r = exact(base, Origin::kVmmImport);
  if (r == nullptr) {
    return Status(ErrorCode::kCudaError,
                  "emulated GPU: cuMemExportToShareableHandle needs the start of shareable memory "
                  "(cuMemCreate's, with a POSIX file descriptor handle); cudaMalloc'd memory has "
                  "no shareable handle");
  }
  return r->vmm->exportHandle();
}

Result<void*> EmulatedMemory::vmmImport(int fd, size_t bytes, const std::vector<int>& visible) {
  BRAID_ASSIGN_OR_RETURN(VmmMapping mapping, VmmMapping::import(fd, bytes));
  const auto seen = std::find(visible.begin(), visible.end(), mapping.physicalDevice());
  const int device = seen == visible.end() ? -1 : static_cast<int>(seen - visible.begin());
  return keepMapping(std::move(mapping), Origin::kVmmImport, device);
}

Status EmulatedMemory::vmmUnmap(void* mapped) {
  if (mapped == nullptr) return invalidArgument("emulated GPU: vmmUnmap of NULL");
  return release(mapped, Origin::kVmmImport, "vmmUnmap (cuMemUnmap)");
}

}  // namespace braid::gpu
