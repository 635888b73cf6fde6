#include "transport/shm/shared_host_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace braid::transport::shm {
namespace {

struct Allocation {
  size_t bytes;
  int fd;
  uint64_t id;
};

struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, Allocation> byStart;
  uint64_t nextId = 1;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: frees may come from exit handlers
  return *r;
}

std::string errnoText(const char* what) { return std::string(what) + ": " + strerror(errno); }

}  // namespace

Result<void*> allocSharedHost(size_t bytes) {
  if (bytes == 0) return invalidArgument("shared host memory of 0 bytes");
  const int fd = memfd_create("braid-mem", MFD_CLOEXEC);
  if (fd < 0) return systemError(errnoText("memfd_create"));
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const Status s = systemError(errnoText("ftruncate of a memfd"));
    close(fd);
    return s;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const Status s = systemError(errnoText("mmap of a memfd"));
    close(fd);
    return s;
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.byStart[reinterpret_cast<uintptr_t>(p)] = Allocation{bytes, fd, r.nextId++};
  return p;
}

bool freeSharedHost(void* ptr) {
  Registry& r = registry();
  Allocation a{};
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.byStart.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == r.byStart.end()) return false;
    a = it->second;
    r.byStart.erase(it);
  }
  munmap(ptr, a.bytes);
  close(a.fd);
  return true;
}

std::optional<SharedRange> findSharedHost(const void* ptr, size_t bytes) {
  Registry& r = registry();
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.byStart.upper_bound(p);
  if (it == r.byStart.begin()) return std::nullopt;
  --it;
  const Allocation& a = it->second;
  if (p + bytes > it->first + a.bytes || p + bytes < p) return std::nullopt;
  return SharedRange{a.id, a.fd, a.bytes, p - it->first};
}

Result<PeerMapping> PeerMapping::open(pid_t pid, const SharedRange& range) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(range.fd);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return remoteError(errnoText(("opening " + path).c_str()));
  void* p = mmap(nullptr, range.mapBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int mapErrno = errno;
  close(fd);
  if (p == MAP_FAILED) {
    errno = mapErrno;
    return remoteError(errnoText(("mapping " + path).c_str()));
  }
  return PeerMapping(static_cast<char*>(p), range.mapBytes);
}

PeerMapping::PeerMapping(PeerMapping&& other) noexcept : data_(other.data_), bytes_(other.bytes_) {
  other.data_ = nullptr;
  other.bytes_ = 0;
}

PeerMapping& PeerMapping::operator=(PeerMapping&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, bytes_);
    data_ = other.data_;
    bytes_ = other.bytes_;
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

PeerMapping::~PeerMapping() {
  if (data_ != nullptr) munmap(data_, bytes_);
}

}  // namespace braid::transport::shm
