// shm_open / posix_fallocate / mmap behind ShmSegment, with error messages
// that name the segment and say what to do about the common failures.
#include "transport/shm/shm_segment.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace braid::transport::shm {
namespace {

// Closes a descriptor on every path out of create() and open().
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() { close(fd_); }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

std::string errorText(int err) {
  char buf[128];
  // The GNU strerror_r returns the text, which may or may not be in buf.
  return strerror_r(err, buf, sizeof(buf));
}

Status shmError(const char* doing, const std::string& name, int err) {
  std::string message = std::string(doing) + " shm segment " + name + ": " + errorText(err);
  if (err == ENOSPC) {
    message +=
        " (/dev/shm is full or too small: free space there, give the container more "
        "(docker --shm-size), or lower BRAID_BUFFSIZE / BRAID_NCHANNELS)";
  } else if (err == EEXIST) {
    message += " (left behind by an earlier run? remove it from /dev/shm)";
  } else if (err == ENOENT) {
    message += " (its creator has not made it yet, has failed, or it was already unlinked)";
  }
  return systemError(message);
}

// The unnamed segment's errors: no /dev/shm to blame, its memory is the process's own.
Status memfdError(const char* doing, const std::string& what, int err) {
  std::string message = std::string(doing) + " shm segment " + what + ": " + errorText(err);
  if (err == ENOMEM || err == ENOSPC || err == EMFILE) {
    message +=
        " (the process is out of memory or file descriptors: lower BRAID_BUFFSIZE / "
        "BRAID_NCHANNELS, or raise its limits)";
  }
  return systemError(message);
}

Status checkName(const std::string& name) {
  bool ok = name.size() >= 2 && name[0] == '/' && name.find('/', 1) == std::string::npos &&
            name.size() - 1 <= NAME_MAX;
  if (ok) return Status();
  return invalidArgument("bad shm segment name '" + name + "': it must be '/' followed by 1 to " +
                         std::to_string(NAME_MAX) + " characters without '/'");
}

}  // namespace

Result<ShmSegment> ShmSegment::create(const std::string& name, size_t bytes) {
  BRAID_TRY(checkName(name));
  if (bytes == 0) return invalidArgument("shm segment " + name + " of 0 bytes");
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return shmError("cannot create", name, errno);
  FdCloser closer(fd);
  // ftruncate alone reserves nothing on tmpfs; the shortage would surface
  // as a SIGBUS when the data path first touches a page.
  int err = 0;
  do {
    err = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  } while (err == EINTR);
  if (err != 0) {
    shm_unlink(name.c_str());
    return shmError(("cannot reserve " + std::to_string(bytes) + " bytes for").c_str(), name, err);
  }
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) {
    err = errno;
    shm_unlink(name.c_str());
    return shmError("cannot map", name, err);
  }
  return ShmSegment(name, data, bytes, /*unlinkOnDestroy=*/true);
}

Result<std::optional<ShmSegment>> ShmSegment::openIfReady(const std::string& name) {
  BRAID_TRY(checkName(name));
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0 && errno == ENOENT) return std::optional<ShmSegment>();
  if (fd < 0) return shmError("cannot open", name, errno);
  FdCloser closer(fd);
  struct stat st {};
  if (fstat(fd, &st) != 0) return shmError("cannot stat", name, errno);
  if (st.st_size <= 0) return std::optional<ShmSegment>();
  size_t bytes = static_cast<size_t>(st.st_size);
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) return shmError("cannot map", name, errno);
  return std::optional<ShmSegment>(ShmSegment(name, data, bytes, /*unlinkOnDestroy=*/false));
}

Result<ShmSegment> ShmSegment::open(const std::string& name) {
  BRAID_TRY(checkName(name));
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return shmError("cannot open", name, errno);
  FdCloser closer(fd);
  struct stat st {};
  if (fstat(fd, &st) != 0) return shmError("cannot stat", name, errno);
  if (st.st_size <= 0) {
    return systemError("shm segment " + name +
                       " is empty: its creator has not finished setting it up");
  }
  size_t bytes = static_cast<size_t>(st.st_size);
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) return shmError("cannot map", name, errno);
  return ShmSegment(name, data, bytes, /*unlinkOnDestroy=*/false);
}

Result<std::pair<ShmSegment, ShmSegment>> ShmSegment::createUnnamedPair(size_t bytes) {
  const std::string what = "(unnamed, " + std::to_string(bytes) + " bytes)";
  if (bytes == 0) return invalidArgument("shm segment " + what + " of 0 bytes");
  const int fd = memfd_create("braid-private", MFD_CLOEXEC);
  if (fd < 0) return memfdError("cannot create", what, errno);
  FdCloser closer(fd);
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) return memfdError("cannot size", what, errno);
  void* first = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (first == MAP_FAILED) return memfdError("cannot map", what, errno);
  ShmSegment a(what, first, bytes, /*unlinkOnDestroy=*/false);
  void* second = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (second == MAP_FAILED) return memfdError("cannot map", what, errno);
  ShmSegment b(what, second, bytes, /*unlinkOnDestroy=*/false);
  return std::make_pair(std::move(a), std::move(b));
}

Status ShmSegment::unlink(const std::string& name) {
  BRAID_TRY(checkName(name));
  if (shm_unlink(name.c_str()) != 0 && errno != ENOENT) {
    return shmError("cannot unlink", name, errno);
  }
  return Status();
}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept
    : name_(std::move(other.name_)),
      data_(other.data_),
      size_(other.size_),
      unlinkOnDestroy_(other.unlinkOnDestroy_) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.unlinkOnDestroy_ = false;
}

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    reset();
    name_ = std::move(other.name_);
    data_ = other.data_;
    size_ = other.size_;
    unlinkOnDestroy_ = other.unlinkOnDestroy_;
    other.data_ = nullptr;
    other.size_ = 0;
    other.unlinkOnDestroy_ = false;
  }
  return *this;
}

ShmSegment::~ShmSegment() { reset(); }

void ShmSegment::reset() {
  if (data_ != nullptr) munmap(data_, size_);
  // A creator that is torn down before the comm unlinked the name (a failed
  // setup) must not leave the segment in /dev/shm. If the name is already
  // gone this is a harmless ENOENT.
  if (unlinkOnDestroy_) shm_unlink(name_.c_str());
  data_ = nullptr;
  size_ = 0;
  unlinkOnDestroy_ = false;
}

}  // namespace braid::transport::shm
