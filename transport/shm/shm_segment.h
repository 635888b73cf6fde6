// A shared-memory segment, mapped read-write, owned by RAII: a named POSIX one for memory that
// other processes map, or an unnamed memfd mapped twice for memory that stays in this process.
//
// The shm transport puts each FIFO in its own segment: the receiver creates
// it, the sender opens it by name, and the comm unlinks the name once both
// have mapped it, so that a crash afterwards leaves nothing in /dev/shm. The
// file descriptor is closed as soon as the segment is mapped (the mapping
// keeps the memory alive), so a comm with hundreds of FIFOs does not hold
// hundreds of descriptors.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "braid/status.h"

namespace braid::transport::shm {

class ShmSegment {
 public:
  /// Creates `name` (it must not exist), reserves `bytes` of zeroed memory
  /// for it and maps it. Space is reserved up front so that a full
  /// /dev/shm is an error here, not a SIGBUS at the first touch.
  static Result<ShmSegment> create(const std::string& name, size_t bytes);
  /// Maps the whole of an existing segment.
  static Result<ShmSegment> open(const std::string& name);
  /// Like open(), but a segment that does not exist yet, or whose creator has
  /// not given it its size yet, is not an error: the result is then empty.
  static Result<std::optional<ShmSegment>> openIfReady(const std::string& name);
  /// Two mappings of `bytes` of zeroed memory without a name (memfd_create), for memory whose
  /// users are all in this process (a FIFO between a rank and its network proxy): nothing in
  /// /dev/shm to leak or to fill, and pages are committed as they are first written, like any
  /// other memory of the process.
  static Result<std::pair<ShmSegment, ShmSegment>> createUnnamedPair(size_t bytes);
  /// Removes the name; mappings stay valid. A name that is already gone
  /// counts as success, so that cleanup paths may call it more than once.
  static Status unlink(const std::string& name);

  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  /// Unmaps; a created segment whose name was not unlinked is unlinked too.
  ~ShmSegment();

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  ShmSegment(std::string name, void* data, size_t size, bool unlinkOnDestroy)
      : name_(std::move(name)), data_(data), size_(size), unlinkOnDestroy_(unlinkOnDestroy) {}
  void reset();

  std::string name_;
  void* data_ = nullptr;
  size_t size_ = 0;
  bool unlinkOnDestroy_ = false;
};

}  // namespace braid::transport::shm
