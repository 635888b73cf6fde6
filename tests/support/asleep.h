// Waiting until a thread is blocked, in place of a fixed sleep: a test that must act while
// another thread (or process) waits inside a call has that thread say it is about to call, then
// watches the kernel's view of it until it sleeps. A thread that announced the call and then
// sleeps in the kernel, seen on consecutive looks, is waiting inside it: nothing between the
// announcement and the call's entry sleeps, so the order is certain however loaded the machine.
#pragma once

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace braid::testing {

/// The calling thread's kernel id, for waitUntilAsleep.
inline pid_t threadId() { return static_cast<pid_t>(syscall(SYS_gettid)); }

/// Whether thread `tid` of process `pid` sleeps in the kernel now (state S or D in /proc).
inline bool isAsleep(pid_t pid, pid_t tid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  // pid (comm) state ...: the name may hold spaces and parentheses, the state follows the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  const char state = line[close + 2];
  return state == 'S' || state == 'D';
}

/// Waits until thread `tid` of process `pid` has been seen asleep on `looks` consecutive looks
/// 10 ms apart (a thread held up on its way in, by a lock or the scheduler, is seen running
/// again); false if it was not within `limit`.
inline bool waitUntilAsleep(pid_t pid, pid_t tid,
                            std::chrono::milliseconds limit = std::chrono::seconds(60),
                            int looks = 5) {
  const auto by = std::chrono::steady_clock::now() + limit;
  int seen = 0;
  while (std::chrono::steady_clock::now() < by) {
    seen = isAsleep(pid, tid) ? seen + 1 : 0;
    if (seen >= looks) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace braid::testing
