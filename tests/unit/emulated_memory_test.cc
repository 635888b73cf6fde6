// The emulated GPU's device memory is shm segments named "/braid-emu-<pid>-<n>". A process that
// leaves with _exit (forked ranks) or crashes keeps its names in /dev/shm, and a later process
// given the same pid would find its first names taken. Before its first device allocation a
// process unlinks the segments of pids that no longer run, and keeps those of live ones.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "gpu/runtime.h"
#include "transport/shm/shm_segment.h"

namespace braid {
namespace {

using transport::shm::ShmSegment;

bool inDevShm(const std::string& name) { return access(("/dev/shm" + name).c_str(), F_OK) == 0; }

TEST(EmulatedMemory, DeadProcessesSegmentsAreReclaimedLiveOnesKept) {
  // A pid that no longer runs: a child that has exited and been reaped.
  const pid_t dead = fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) _exit(0);
  ASSERT_EQ(waitpid(dead, nullptr, 0), dead);
  const std::string stale = "/braid-emu-" + std::to_string(dead) + "-3";
  const std::string live = "/braid-emu-" + std::to_string(getpid()) + "-999999";
  {
    auto s = ShmSegment::create(stale, 4096);
    auto l = ShmSegment::create(live, 4096);
    ASSERT_TRUE(s.ok() && l.ok()) << "cannot make the test's segments";
    // Keep the names: the segments' destructors would unlink them.
    (void)s.value().data();
    ASSERT_TRUE(inDevShm(stale) && inDevShm(live));
    // A fresh process makes its first device allocation: it cleans before it allocates.
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto rt = gpu::makeEmulatedRuntime(1);
      auto p = rt->deviceAlloc(64);
      const bool ok = p.ok() && !inDevShm(stale) && inDevShm(live);
      if (p.ok()) (void)rt->deviceFree(p.value());
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the stale segment was not reclaimed, or the live one was";
  }
  (void)ShmSegment::unlink(stale);
  (void)ShmSegment::unlink(live);
}

}  // namespace
}  // namespace braid
