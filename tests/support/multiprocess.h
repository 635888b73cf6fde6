// Runs a test body as N real processes (fork) or N threads.
//
// In a forked child, gtest failures are counted by that child only, so the
// child exits non-zero when its body failed and the parent turns the exit
// status into a failure of its own naming the rank. A child that does not
// finish within the timeout is killed, so a hang becomes a failure.
//
// The children start their bodies together, once all are forked (start_gate.h says why);
// tests that fork ranks of their own use StartGate the same way.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "support/start_gate.h"

namespace braid::testing {

inline void runProcesses(int nranks, const std::function<void(int rank)>& body,
                         int timeoutSeconds = 120) {
  StartGate gate;
  ASSERT_TRUE(gate.ok()) << "pipe failed";
  std::vector<pid_t> pids;
  for (int rank = 0; rank < nranks; ++rank) {
    fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0) << "fork failed";  // the gate opens as it goes out of scope
    if (pid == 0) {
      gate.pass();
      body(rank);
      _exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    pids.push_back(pid);
  }
  gate.open();
  auto start = std::chrono::steady_clock::now();
  std::vector<bool> done(pids.size(), false);
  size_t remaining = pids.size();
  while (remaining > 0) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      pid_t r = waitpid(pids[i], &status, WNOHANG);
      if (r == 0) continue;
      done[i] = true;
      --remaining;
      if (WIFSIGNALED(status)) {
        ADD_FAILURE() << "rank " << i << " died with signal " << WTERMSIG(status);
      } else if (WEXITSTATUS(status) != 0) {
        ADD_FAILURE() << "rank " << i << " failed (exit " << WEXITSTATUS(status) << ")";
      }
    }
    if (remaining == 0) break;
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(timeoutSeconds)) {
      for (size_t i = 0; i < pids.size(); ++i) {
        if (!done[i]) {
          kill(pids[i], SIGKILL);
          waitpid(pids[i], nullptr, 0);
          ADD_FAILURE() << "rank " << i << " timed out after " << timeoutSeconds << " s";
        }
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

/// What `probe()` returns when run in a forked child, or -1 if the child could not say: for
/// questions whose answer this process must not ask itself (how many GPUs there are, asked of a
/// process that forks its ranks afterwards). The child only runs `probe` and exits.
inline int probeInChild(const std::function<int()>& probe) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fds[0]);
    const int answer = probe();
    const bool sent = write(fds[1], &answer, sizeof(answer)) == sizeof(answer);
    _exit(sent ? 0 : 1);
  }
  close(fds[1]);
  int answer = -1;
  if (read(fds[0], &answer, sizeof(answer)) != sizeof(answer)) answer = -1;
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return answer;
}

inline void runThreads(int nranks, const std::function<void(int rank)>& body) {
  std::vector<std::thread> threads;
  for (int rank = 0; rank < nranks; ++rank) threads.emplace_back(body, rank);
  for (auto& t : threads) t.join();
}

}  // namespace braid::testing
