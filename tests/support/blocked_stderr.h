// A process whose stderr blocks: fd 2 becomes a full pipe, as when the reader of a job's log
// stalls, and every write to it waits until a shared word says to drain it. For tests that a
// rank's reaction to a fault never waits for its log line.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <thread>

namespace braid::testing {

/// Makes fd 2 of this process a pipe filled to capacity; a thread drains it from the moment
/// `*word` (shared memory, which another process counts up) exceeds `above`. False when the pipe
/// could not be made, and stderr is then as it was.
inline bool blockStderrUntil(const std::atomic<int32_t>* word, int32_t above) {
  int ends[2];
  if (pipe(ends) != 0) return false;
  const int flags = fcntl(ends[1], F_GETFL);
  (void)fcntl(ends[1], F_SETFL, flags | O_NONBLOCK);
  char fill[4096] = {};
  // Whole pages while they fit, then single bytes: no room for even one byte is left.
  for (size_t chunk : {sizeof(fill), size_t{1}}) {
    while (write(ends[1], fill, chunk) > 0) {
    }
  }
  const bool full = errno == EAGAIN;
  (void)fcntl(ends[1], F_SETFL, flags);
  if (!full || dup2(ends[1], 2) < 0) {
    close(ends[0]);
    close(ends[1]);
    return false;
  }
  close(ends[1]);
  std::thread([reader = ends[0], word, above] {
    while (word->load() <= above) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    char sink[4096];
    while (read(reader, sink, sizeof(sink)) > 0) {
    }
  }).detach();
  return true;
}

}  // namespace braid::testing
