// The start gate of forked ranks.
//
// A parent that forks ranks may already run a thread: the root of the unique id it made,
// which is at work once ranks join it. Forking while that thread allocates hands the child a
// held allocator lock, which glibc resets in the child but the ASan runtime of GCC 12 and
// clang 14 does not (the child then hangs). So the children wait at the gate until the parent
// has forked the last of them, and no rank has yet set the root to work during a fork. That
// narrows the window without closing it (the root thread also allocates as it starts and
// ends); scripts/sanitize uses clang 19, whose runtime takes its locks across fork().
#pragma once

#include <unistd.h>

#include <cerrno>

namespace braid::testing {

/// The start gate of forked ranks: a child waits in `pass` until the parent calls `open`
/// after its last fork (the child's read of the pipe ends at end of file, once the parent has
/// closed the write end and every child its copy of it).
class StartGate {
 public:
  StartGate() {
    if (pipe(fds_) != 0) fds_[0] = fds_[1] = -1;
  }
  ~StartGate() { open(); }
  StartGate(const StartGate&) = delete;
  StartGate& operator=(const StartGate&) = delete;

  bool ok() const { return fds_[0] >= 0; }
  /// In a child just forked: returns once the parent has opened the gate.
  void pass() {
    close(fds_[1]);
    char byte;
    while (read(fds_[0], &byte, 1) < 0 && errno == EINTR) {
    }
    close(fds_[0]);
    fds_[0] = fds_[1] = -1;
  }
  /// In the parent: lets every child forked so far start.
  void open() {
    if (fds_[0] >= 0) close(fds_[0]);
    if (fds_[1] >= 0) close(fds_[1]);
    fds_[0] = fds_[1] = -1;
  }

 private:
  int fds_[2];
};

}  // namespace braid::testing
