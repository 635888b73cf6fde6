#include "emulation/gpu/emulated_memory.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "emulation/gpu/emulated_dmabuf.h"

namespace braid::gpu {
namespace {

constexpr uint64_t kHandleMagic = 0x314d454449415242ull;  // "BRAIDEM1"
constexpr size_t kPage = 4096;

// The bytes of an emulated IPC handle.
struct HandleBody {
  uint64_t magic;
  int32_t pid;
  int32_t device;
  uint64_t bytes;
  char name[40];
};
static_assert(sizeof(HandleBody) <= sizeof(IpcHandle), "an emulated handle fits CUDA's 64 bytes");

void freeAligned(unsigned char* p) { std::free(p); }

// The names of device allocations still alive, unlinked at exit: the
// process's runtime is never destroyed (gpu/runtime.cc), so its segments'
// destructors do not run, and their names would stay in /dev/shm.
std::mutex liveNamesMutex;
std::set<std::string>& liveNames() {
  static auto* names = new std::set<std::string>();
  return *names;
}
void unlinkLiveNames() {
  std::lock_guard<std::mutex> lock(liveNamesMutex);
  for (const std::string& name : liveNames()) (void)transport::shm::ShmSegment::unlink(name);
}
void rememberName(const std::string& name) {
  static const bool registered = std::atexit(unlinkLiveNames) == 0;
  (void)registered;
  std::lock_guard<std::mutex> lock(liveNamesMutex);
  liveNames().insert(name);
}
void forgetName(const std::string& name) {
  std::lock_guard<std::mutex> lock(liveNamesMutex);
  liveNames().erase(name);
}

// Segments "/braid-emu-<pid>-<n>" of processes that are gone. A process that
// leaves with _exit (forked test ranks, braid-perf's --procs children) or
// crashes skips the atexit cleanup above, and a later process given the same
// pid would find its names taken. So each process, before its first device
// allocation, unlinks the segments of every pid that no longer runs, and
// its own pid's (it has made none yet: they are a dead namesake's).
void unlinkSegmentsOfDeadProcesses() {
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return;
  const int self = static_cast<int>(getpid());
  constexpr const char* kPrefix = "braid-emu-";
  while (const dirent* entry = readdir(dir)) {
    if (strncmp(entry->d_name, kPrefix, strlen(kPrefix)) != 0) continue;
    const int pid = atoi(entry->d_name + strlen(kPrefix));
    if (pid <= 0) continue;
    if (pid == self || (kill(pid, 0) != 0 && errno == ESRCH)) {
      (void)transport::shm::ShmSegment::unlink(std::string("/") + entry->d_name);
    }
  }
  closedir(dir);
}

// Names are numbered per process, whatever instance of the emulation makes them.
std::atomic<uint64_t> nextSegment{0};

// Before the process's first device allocation, from any instance. A forked
// child inherits the parent's mark but not its pid, so it cleans too.
void unlinkStaleSegmentsOnce() {
  static std::mutex mutex;
  static int cleanedFor = 0;
  std::lock_guard<std::mutex> lock(mutex);
  if (cleanedFor == static_cast<int>(getpid())) return;
  unlinkSegmentsOfDeadProcesses();
  cleanedFor = static_cast<int>(getpid());
}

}  // namespace

EmulatedMemory::Range* EmulatedMemory::exact(const void* pointer, Origin origin) {
  auto it = ranges_.find(reinterpret_cast<uintptr_t>(pointer));
  if (it == ranges_.end() || it->second.origin != origin) return nullptr;
  return &it->second;
}

Status EmulatedMemory::release(void* pointer, Origin origin, const char* what) {
  if (pointer == nullptr) return Status::success();
  std::lock_guard<std::mutex> lock(mutex_);
  Range* r = exact(pointer, origin);
  if (r == nullptr) {
    return invalidArgument(std::string("emulated GPU: ") + what +
                           " of a pointer it did not give out");
  }
  if (origin == Origin::kDeviceAlloc) forgetName(r->segment->name());
  ranges_.erase(reinterpret_cast<uintptr_t>(pointer));
  return Status::success();
}

Result<void*> EmulatedMemory::deviceAlloc(size_t bytes, int device) {
  if (bytes == 0) return static_cast<void*>(nullptr);  // as cudaMalloc(0)
  std::lock_guard<std::mutex> lock(mutex_);
  unlinkStaleSegmentsOnce();
  char name[40];
  snprintf(name, sizeof(name), "/braid-emu-%d-%" PRIu64, static_cast<int>(getpid()),
           nextSegment.fetch_add(1));
  const size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  BRAID_ASSIGN_OR_RETURN(transport::shm::ShmSegment segment,
                         transport::shm::ShmSegment::create(name, rounded));
  Range r;
  r.bytes = bytes;
  r.origin = Origin::kDeviceAlloc;
  r.device = device;
  r.segment = std::make_unique<transport::shm::ShmSegment>(std::move(segment));
  rememberName(name);
  void* p = r.segment->data();
  ranges_.emplace(reinterpret_cast<uintptr_t>(p), std::move(r));
  return p;
}

Status EmulatedMemory::deviceFree(void* pointer) {
  return release(pointer, Origin::kDeviceAlloc, "deviceFree");
}

Result<void*> EmulatedMemory::hostAlloc(size_t bytes) {
  const size_t rounded = (std::max<size_t>(bytes, 1) + kPage - 1) / kPage * kPage;
  auto* p = static_cast<unsigned char*>(std::aligned_alloc(kPage, rounded));
  if (p == nullptr) return systemError("emulated GPU: out of host memory");
  memset(p, 0, rounded);
  std::lock_guard<std::mutex> lock(mutex_);
  Range r;
  r.bytes = bytes;
  r.origin = Origin::kHostAlloc;
  r.host = {p, freeAligned};
  ranges_.emplace(reinterpret_cast<uintptr_t>(p), std::move(r));
  return static_cast<void*>(p);
}

Status EmulatedMemory::hostFree(void* pointer) {
  return release(pointer, Origin::kHostAlloc, "hostFree");
}

Status EmulatedMemory::hostRegister(void* pointer, size_t bytes) {
  if (pointer == nullptr || bytes == 0) {
    return invalidArgument("emulated GPU: hostRegister of an empty range");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  Range r;
  r.bytes = bytes;
  r.origin = Origin::kHostRegister;
  if (!ranges_.emplace(reinterpret_cast<uintptr_t>(pointer), std::move(r)).second) {
    return invalidUsage("emulated GPU: memory registered twice");
  }
  return Status::success();
}

Status EmulatedMemory::hostUnregister(void* pointer) {
  return release(pointer, Origin::kHostRegister, "hostUnregister");
}

PointerInfo EmulatedMemory::pointerInfo(const void* pointer) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto at = reinterpret_cast<uintptr_t>(pointer);
  auto it = ranges_.upper_bound(at);
  if (it == ranges_.begin()) return {};
  --it;
  if (at >= it->first + std::max<size_t>(it->second.bytes, 1)) return {};
  switch (it->second.origin) {
    case Origin::kDeviceAlloc:
    case Origin::kIpcMapping:
    case Origin::kVmmAlloc:
    case Origin::kVmmImport:
      return {MemoryKind::kDevice, it->second.device};
    case Origin::kHostAlloc:
    case Origin::kHostRegister:
      return {MemoryKind::kPinnedHost, -1};
  }
  return {};
}

Result<IpcHandle> EmulatedMemory::ipcHandle(void* pointer) {
  std::lock_guard<std::mutex> lock(mutex_);
  Range* r = exact(pointer, Origin::kDeviceAlloc);
  if (r == nullptr) {
    return invalidArgument("emulated GPU: ipcHandle needs the start of a device allocation");
  }
  HandleBody body{};
  body.magic = kHandleMagic;
  body.pid = static_cast<int32_t>(getpid());
  body.device = r->device;
  body.bytes = r->bytes;
  snprintf(body.name, sizeof(body.name), "%s", r->segment->name().c_str());
  IpcHandle h{};
  memcpy(h.bytes, &body, sizeof(body));
  return h;
}

Result<void*> EmulatedMemory::ipcOpen(const IpcHandle& handle) {
  HandleBody body;
  memcpy(&body, handle.bytes, sizeof(body));
  if (body.magic != kHandleMagic) {
    return invalidArgument("emulated GPU: not an IPC handle of an emulated GPU");
  }
  if (body.pid == static_cast<int32_t>(getpid())) {
    // CUDA refuses to open a handle in the process that made it; so does
    // the emulation, so that code tested on it does not rely on it.
    return invalidUsage("emulated GPU: an IPC handle cannot be opened in the process that made it");
  }
  body.name[sizeof(body.name) - 1] = '\0';
  BRAID_ASSIGN_OR_RETURN(transport::shm::ShmSegment segment,
                         transport::shm::ShmSegment::open(body.name));
  std::lock_guard<std::mutex> lock(mutex_);
  Range r;
  r.bytes = body.bytes;
  r.origin = Origin::kIpcMapping;
  r.device = body.device;
  r.segment = std::make_unique<transport::shm::ShmSegment>(std::move(segment));
  void* p = r.segment->data();
  ranges_.emplace(reinterpret_cast<uintptr_t>(p), std::move(r));
  return p;
}

Status EmulatedMemory::ipcClose(void* pointer) {
  return release(pointer, Origin::kIpcMapping, "ipcClose");
}

Result<int> EmulatedMemory::exportDmabuf(void* pointer, size_t bytes) {
  const auto at = reinterpret_cast<uintptr_t>(pointer);
  if (at % kPage != 0 || bytes % kPage != 0 || bytes == 0) {
    return invalidArgument("emulated GPU: a dmabuf range must start and end on a host page (" +
                           std::to_string(kPage) +
                           " bytes), as cuMemGetHandleForAddressRange "
                           "requires");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = ranges_.upper_bound(at);
  if (it == ranges_.begin()) {
    return invalidArgument("emulated GPU: a dmabuf of memory that is no device allocation");
  }
  --it;
  const Range& r = it->second;
  const size_t rounded = (r.bytes + kPage - 1) / kPage * kPage;
  if (r.origin != Origin::kDeviceAlloc || at + bytes > it->first + rounded) {
    return invalidArgument("emulated GPU: a dmabuf range must lie within one device allocation");
  }
  const int fd = shm_open(r.segment->name().c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) {
    return systemError(std::string("emulated GPU: exporting a dmabuf: ") + strerror(errno));
  }
  recordDmabuf(fd, DmabufRange{at - it->first, bytes});
  // The descriptor's position marks where the range starts in the file, for an importer outside
  // this library (a network plugin's regMrDmaBuf, emulated_dmabuf.h): its own open file
  // description, which nothing reads or writes through.
  if (lseek(fd, static_cast<off_t>(at - it->first), SEEK_SET) < 0) {
    const int saved = errno;
    close(fd);
    return systemError(std::string("emulated GPU: exporting a dmabuf: ") + strerror(saved));
  }
  return fd;
}

}  // namespace braid::gpu
