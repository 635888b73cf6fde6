// Life lines (see life_line.h): the page, its robust mutex, and trying a neighbour's.
#include "watch/life_line.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <string>

#include "base/hash.h"

namespace braid::watch {

struct LifePage {
  uint64_t magic;  ///< the communicator's: a page that is not its own is not used
  int32_t rank;
  std::atomic<uint32_t> leaving;  ///< set before the owner lets go in order
  pthread_mutex_t mutex;          ///< robust, process-shared
};

namespace {

constexpr size_t kPageBytes = 4096;
static_assert(sizeof(LifePage) <= kPageBytes, "a life line is one page");

LifePage* mapPage(int fd) {
  void* p = mmap(nullptr, kPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<LifePage*>(p);
}

}  // namespace

uint64_t thisKernel() {
  FILE* f = fopen("/proc/sys/kernel/random/boot_id", "re");
  if (f == nullptr) return 0;
  char id[64] = "";
  const bool read = fgets(id, sizeof(id), f) != nullptr;
  fclose(f);
  return read ? stableHash(id) | 1 : 0;  // never 0, which says "no line"
}

std::unique_ptr<OwnLifeLine> OwnLifeLine::make(uint64_t magic, int rank) {
  const int fd = memfd_create("braid-life-line", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  LifePage* page = ftruncate(fd, kPageBytes) == 0 ? mapPage(fd) : nullptr;
  if (page == nullptr) {
    close(fd);
    return nullptr;
  }
  page->magic = magic;
  page->rank = rank;
  page->leaving.store(0);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  const int made = pthread_mutex_init(&page->mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  if (made != 0) {
    munmap(page, kPageBytes);
    close(fd);
    return nullptr;
  }
  return std::unique_ptr<OwnLifeLine>(new OwnLifeLine(page, fd));
}

OwnLifeLine::~OwnLifeLine() {
  // Not destroyed: a neighbour may still map the page. A fork's child, whose copy this may be,
  // never held it.
  munmap(page_, kPageBytes);
  close(fd_);
}

LifeLineAddress OwnLifeLine::address() const {
  return LifeLineAddress{thisKernel(), static_cast<int32_t>(getpid()), fd_};
}

void OwnLifeLine::hold() {
  // A neighbour that tries it before this thread holds it holds it for a moment only; one that
  // died in that moment leaves it to this thread marked inconsistent.
  const int rc = pthread_mutex_lock(&page_->mutex);
  if (rc == EOWNERDEAD) pthread_mutex_consistent(&page_->mutex);
  held_ = rc == 0 || rc == EOWNERDEAD;
}

void OwnLifeLine::letGo() {
  if (!held_) return;
  page_->leaving.store(1);
  pthread_mutex_unlock(&page_->mutex);
  held_ = false;
}

std::unique_ptr<PeerLifeLine> PeerLifeLine::open(const LifeLineAddress& address, uint64_t magic,
                                                 int rank) {
  if (address.kernel == 0 || address.kernel != thisKernel() || address.fd < 0) return nullptr;
  const std::string path =
      "/proc/" + std::to_string(address.pid) + "/fd/" + std::to_string(address.fd);
  // Only a page-sized regular file (a memfd is one): never a device or a pipe that another
  // process happens to hold under that number in another pid namespace.
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size != static_cast<off_t>(kPageBytes)) {
    return nullptr;
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return nullptr;
  LifePage* page = mapPage(fd);
  close(fd);
  if (page == nullptr) return nullptr;
  if (page->magic != magic || page->rank != rank) {
    munmap(page, kPageBytes);
    return nullptr;
  }
  return std::unique_ptr<PeerLifeLine>(new PeerLifeLine(page));
}

PeerLifeLine::~PeerLifeLine() { munmap(page_, kPageBytes); }

PeerLifeLine::State PeerLifeLine::check() {
  const int rc = pthread_mutex_trylock(&page_->mutex);
  if (rc == EBUSY) return State::kAlive;
  if (rc == 0) {
    // Not held: its thread has not started yet, or it let go in order.
    const bool left = page_->leaving.load() != 0;
    pthread_mutex_unlock(&page_->mutex);
    return left ? State::kLeft : State::kAlive;
  }
  if (rc == EOWNERDEAD) {
    // Unlocked without pthread_mutex_consistent: whoever tries next finds it unrecoverable,
    // which says the same.
    const bool left = page_->leaving.load() != 0;
    pthread_mutex_unlock(&page_->mutex);
    return left ? State::kLeft : State::kDead;
  }
  if (rc == ENOTRECOVERABLE) return page_->leaving.load() != 0 ? State::kLeft : State::kDead;
  return State::kAlive;  // EAGAIN and the like: try again later
}

}  // namespace braid::watch
