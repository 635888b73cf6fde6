// The emulated GPU's shareable memory: see emulated_vmm.h.
#include "emulation/gpu/emulated_vmm.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace braid::gpu {
namespace {

constexpr const char* kNamePrefix = "braid-vmm-p";

std::atomic<uint64_t> nextAllocation{0};

Status sysFailure(const std::string& what) {
  return systemError("emulated GPU: " + what + ": " + strerror(errno));
}

/// The device an emulated handle's memfd was made for, read from its name as /proc shows it
/// ("/memfd:braid-vmm-p<device>-..."); -1 where the descriptor is no such memfd.
int deviceOfHandle(int fd) {
  char link[64];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  char target[256] = {};
  const ssize_t n = readlink(link, target, sizeof(target) - 1);
  if (n <= 0) return -1;
  const std::string name(target, static_cast<size_t>(n));
  const std::string expected = std::string("/memfd:") + kNamePrefix;
  if (name.compare(0, expected.size(), expected) != 0) return -1;
  return atoi(name.c_str() + expected.size());
}

Result<void*> mapShared(int fd, size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return sysFailure("mapping shareable memory (cuMemMap)");
  return p;
}

}  // namespace

Result<VmmMapping> VmmMapping::create(size_t bytes, int physicalDevice) {
  char name[64];
  snprintf(name, sizeof(name), "%s%d-%d-%llu", kNamePrefix, physicalDevice,
           static_cast<int>(getpid()), static_cast<unsigned long long>(nextAllocation++));
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return sysFailure("creating shareable memory (cuMemCreate)");
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const Status failed = sysFailure("sizing shareable memory (cuMemCreate)");
    close(fd);
    return failed;
  }
  Result<void*> base = mapShared(fd, bytes);
  if (!base.ok()) {
    close(fd);
    return base.status();
  }
  return VmmMapping(fd, base.value(), bytes, physicalDevice);
}

Result<VmmMapping> VmmMapping::import(int fd, size_t bytes) {
  const int device = deviceOfHandle(fd);
  if (device < 0) {
    return invalidArgument("emulated GPU: descriptor " + std::to_string(fd) +
                           " is not a shareable handle of an emulated GPU in this process "
                           "(cuMemImportFromShareableHandle: CUDA_ERROR_INVALID_VALUE); a handle "
                           "from another process must be passed here as a descriptor (SCM_RIGHTS)");
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) return sysFailure("reading a shareable handle");
  if (static_cast<size_t>(st.st_size) != bytes) {
    return invalidArgument("emulated GPU: mapping " + std::to_string(bytes) +
                           " bytes of a shareable allocation of " + std::to_string(st.st_size) +
                           " (cuMemMap: CUDA_ERROR_INVALID_VALUE)");
  }
  // The mapping keeps a descriptor of its own, as CUDA's imported handle outlives the one given.
  const int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return sysFailure("importing a shareable handle");
  Result<void*> base = mapShared(own, bytes);
  if (!base.ok()) {
    close(own);
    return base.status();
  }
  return VmmMapping(own, base.value(), bytes, device);
}

VmmMapping::VmmMapping(VmmMapping&& other) noexcept
    : ownedFd_(other.ownedFd_),
      base_(other.base_),
      bytes_(other.bytes_),
      physicalDevice_(other.physicalDevice_) {
  other.ownedFd_ = -1;
  other.base_ = nullptr;
}

VmmMapping::~VmmMapping() {
  if (base_ != nullptr) munmap(base_, bytes_);
  if (ownedFd_ >= 0) close(ownedFd_);
}

Result<int> VmmMapping::exportHandle() const {
  const int fd = fcntl(ownedFd_, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return sysFailure("exporting shareable memory (cuMemExportToShareableHandle)");
  return fd;
}

}  // namespace braid::gpu
