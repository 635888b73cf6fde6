// A dmabuf descriptor of device memory (gpu::Runtime::exportDmabuf), closed when it goes: the
// NIC's registration of it (ibv_reg_dmabuf_mr) holds its own reference.
#pragma once

#include <unistd.h>

#include <utility>

namespace braid::transport::ib {

class DmabufFd {
 public:
  DmabufFd() = default;
  explicit DmabufFd(int fd) : fd_(fd) {}
  DmabufFd(DmabufFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  DmabufFd& operator=(DmabufFd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  DmabufFd(const DmabufFd&) = delete;
  DmabufFd& operator=(const DmabufFd&) = delete;
  ~DmabufFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

}  // namespace braid::transport::ib
