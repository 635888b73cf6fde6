// The futex system calls behind base/futex.h, and the wait error messages.
//
// glibc has no futex wrapper, so these go through syscall(2). FUTEX_WAIT
// takes a relative timeout on CLOCK_MONOTONIC, which is what the slices of
// waitUntil() need.
#include "base/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace braid::futex {
namespace {

// The kernel reads the word; it never writes it, so dropping const is safe.
uint32_t* address(const uint32_t* word) { return const_cast<uint32_t*>(word); }

std::string peerName(int peer) {
  return peer >= 0 ? "rank " + std::to_string(peer) : std::string("the peer");
}

}  // namespace

WaitResult wait(const uint32_t* word, uint32_t expected, int64_t timeoutNs) {
  timespec timeout{};
  timespec* timeoutPtr = nullptr;
  if (timeoutNs >= 0) {
    timeout.tv_sec = static_cast<time_t>(timeoutNs / 1000000000);
    timeout.tv_nsec = static_cast<long>(timeoutNs % 1000000000);
    timeoutPtr = &timeout;
  }
  long rc = syscall(SYS_futex, address(word), FUTEX_WAIT, expected, timeoutPtr, nullptr, 0);
  if (rc == 0) return WaitResult::kWoken;
  switch (errno) {
    case EAGAIN:
      return WaitResult::kValueChanged;
    case ETIMEDOUT:
      return WaitResult::kTimedOut;
    case EINTR:
      return WaitResult::kInterrupted;
    default:
      // EFAULT or EINVAL would be a bug in the caller (a word outside any
      // mapping, a misaligned word); callers recheck their condition anyway,
      // so report it as a wakeup rather than hide a spin behind a timeout.
      return WaitResult::kWoken;
  }
}

int wake(const uint32_t* word, int count) {
  long rc = syscall(SYS_futex, address(word), FUTEX_WAKE, count, nullptr, nullptr, 0);
  return rc < 0 ? 0 : static_cast<int>(rc);
}

Status timedOutError(int64_t elapsedMs, int peer) {
  return remoteError("timed out after " + std::to_string(elapsedMs) + " ms waiting for " +
                     peerName(peer));
}

Status abortedError(int peer) {
  return remoteError("stopped waiting for " + peerName(peer) +
                     ": the communicator was aborted or revoked, or lost a peer");
}

}  // namespace braid::futex
