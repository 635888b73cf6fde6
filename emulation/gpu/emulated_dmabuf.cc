// The emulated GPU's dmabuf exports: see emulated_dmabuf.h.
#include "emulation/gpu/emulated_dmabuf.h"

#include <sys/stat.h>

#include <map>
#include <mutex>

namespace braid::gpu {
namespace {

struct Export {
  DmabufRange range;
  dev_t device;  ///< the file's identity when exported
  ino_t inode;
};

std::mutex mutex;
std::map<int, Export>& exports() {
  static auto* table = new std::map<int, Export>();  // outlives every static user
  return *table;
}

}  // namespace

void recordDmabuf(int fd, const DmabufRange& range) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return;
  std::lock_guard<std::mutex> lock(mutex);
  exports()[fd] = Export{range, st.st_dev, st.st_ino};
}

std::optional<DmabufRange> findDmabuf(int fd) {
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) return std::nullopt;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = exports().find(fd);
  if (it == exports().end() || it->second.device != st.st_dev || it->second.inode != st.st_ino) {
    return std::nullopt;
  }
  return it->second.range;
}

}  // namespace braid::gpu
