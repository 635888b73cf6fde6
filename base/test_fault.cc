#include "base/test_fault.h"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace braid::test_fault {

void reached(const char* point) {
  const char* armed = getenv("BRAID_TEST_DIE_AT");
  if (armed == nullptr || strcmp(armed, point) != 0) return;
  char what[96];
  snprintf(what, sizeof(what), "die_at:%s", point);
  injected(what);
  // SIGKILL, as a test's kill would be: no handler, no exit path, the kernel closes every socket.
  raise(SIGKILL);
}

void injected(const char* what) {
  const char* path = getenv("BRAID_TEST_FAULT_TIME_FILE");
  if (path == nullptr || *path == '\0') return;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  char line[160];
  const int length =
      snprintf(line, sizeof(line), "%lld%09ld %d %s\n", static_cast<long long>(now.tv_sec),
               now.tv_nsec, static_cast<int>(getpid()), what);
  if (length <= 0 || static_cast<size_t>(length) >= sizeof(line)) return;
  // One write of the whole line to a file opened for appending: lines of processes that fault
  // at once do not interleave.
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!write(fd, line, static_cast<size_t>(length));
  close(fd);
}

}  // namespace braid::test_fault
