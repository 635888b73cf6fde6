// A rank's life line: a robust, process-shared mutex that its watcher's thread holds for as long
// as it runs, in a page of its own that the ranks on the same kernel map. They hear of its death
// when the death begins instead of when it ends.
//
// Why: the watch hears of a death when the dead process's sockets close, and the kernel closes
// them only after it has torn down the process's memory (do_exit runs exit_mm before
// exit_files). A large process, or any process on a loaded host, takes that long to die: seconds
// were measured for the kill trials' ranks (docs/reliability.md, "A slow kill"). A thread's robust
// mutexes are released by the kernel as the thread begins to exit (its robust list, before the
// teardown), and whoever tries the mutex then finds its owner dead (EOWNERDEAD).
//
//   held     the owner's watcher thread locks it before anything else, and keeps it
//   dead     a neighbour's trylock returns EOWNERDEAD (or ENOTRECOVERABLE, once another
//            neighbour has seen it): the owner's thread ended without letting go
//   left     the owner let go in order (leaving, set before the unlock): no loss
//
// Ranks find each other's page through /proc/PID/fd (as shared host memory does), which only
// works on the same kernel: each rank says which kernel it runs on (its boot id), and a page that
// is not a regular file of the right size, or whose magic and rank are not the communicator's,
// is not used. A rank whose neighbour has no usable line watches it through its socket alone.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>

namespace braid::watch {

/// Where a rank's life line is, for the ranks on its kernel (exchanged with the listeners'
/// addresses).
struct LifeLineAddress {
  uint64_t kernel = 0;  ///< a hash of the kernel's boot id; 0: this rank has no line
  int32_t pid = 0;
  int32_t fd = -1;
};

struct LifePage;

/// This rank's own line.
class OwnLifeLine {
 public:
  /// A page with the mutex unlocked; null where one cannot be made (no line then).
  static std::unique_ptr<OwnLifeLine> make(uint64_t magic, int rank);
  ~OwnLifeLine();
  OwnLifeLine(const OwnLifeLine&) = delete;
  OwnLifeLine& operator=(const OwnLifeLine&) = delete;

  LifeLineAddress address() const;
  /// On the watcher's thread, first: the mutex is this thread's until letGo() or its death.
  void hold();
  /// On the same thread, leaving in order: marks the going as no loss, then unlocks.
  void letGo();

 private:
  OwnLifeLine(LifePage* page, int fd) : page_(page), fd_(fd) {}
  LifePage* page_;
  int fd_;
  bool held_ = false;
};

/// A neighbour's line, as this rank tries it.
class PeerLifeLine {
 public:
  /// Null where the neighbour has no line, runs on another kernel, or its page is not its own.
  static std::unique_ptr<PeerLifeLine> open(const LifeLineAddress& address, uint64_t magic,
                                            int rank);
  ~PeerLifeLine();
  PeerLifeLine(const PeerLifeLine&) = delete;
  PeerLifeLine& operator=(const PeerLifeLine&) = delete;

  enum class State {
    kAlive,  ///< held, or not held yet (the neighbour's thread has not started)
    kDead,   ///< its holder ended without letting go
    kLeft,   ///< it let go in order
  };
  /// One non-blocking try.
  State check();

 private:
  explicit PeerLifeLine(LifePage* page) : page_(page) {}
  LifePage* page_;
};

/// A hash of this kernel's boot id (0 when it cannot be read).
uint64_t thisKernel();

}  // namespace braid::watch
