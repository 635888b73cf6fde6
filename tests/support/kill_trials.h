// Killing a rank of a running job and checking what the survivors see (issue 14's first point).
//
// One trial forks nranks processes that make a communicator and then run collectives in a loop
// until a call fails. Once every rank is in the loop, the test waits a random moment, picks a
// random rank and kills it with SIGKILL. Every survivor must then return ncclRemoteError, with
// an error text that names the killed rank, well before BRAID_TIMEOUT_MS (left at its default of
// 10 minutes): a survivor still running after kHangSeconds is a hang. The survivors write what
// they saw, and when (CLOCK_MONOTONIC, which all processes share), into shared memory; the test
// reports how long they took after the kill, as a figure, never as a pass/fail threshold.
// BRAID_TEST_BACKTRACE_HANGS=1 prints every thread's stack (gdb) of a rank that hangs.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nccl.h"
#include "support/multiprocess.h"

namespace braid::testing {

/// Far below the default BRAID_TIMEOUT_MS (600 s) and far above what detection takes: a survivor
/// that has not returned by then is waiting for the timeout, i.e. a hang.
inline constexpr int kHangSeconds = 30;

inline int64_t monotonicNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

/// What one rank of a trial tells the test, in shared memory.
struct RankReport {
  std::atomic<int32_t> state;  ///< 0 starting, 1 in the loop, 2 returned an error, 3 init failed
  int32_t result;              ///< the failing call's ncclResult_t
  int32_t asyncResult;         ///< ncclCommGetAsyncError after it
  int32_t calls;               ///< calls that succeeded before
  int64_t failedAtNs;          ///< monotonicNs() when the call returned
  char error[1536];            ///< ncclGetLastError
  int32_t recovered;           ///< KillTrialSetup::recover succeeded
  char recoverError[512];      ///< why it did not
};

/// What the trials of one configuration found.
struct KillSummary {
  int trials = 0;
  int hangs = 0;
  int survivors = 0;
  int namedTheRank = 0;  ///< survivors whose error named the killed rank and said it is lost
  int recovered = 0;     ///< survivors whose KillTrialSetup::recover succeeded
  std::vector<double> msToError;
  std::string describe() const {
    std::vector<double> sorted = msToError;
    std::sort(sorted.begin(), sorted.end());
    char line[256];
    snprintf(line, sizeof(line),
             "%d trials, %d hangs, %d/%d survivor errors named the killed rank; time from kill "
             "to error: median %.1f ms, max %.1f ms",
             trials, hangs, namedTheRank, survivors,
             sorted.empty() ? 0.0 : sorted[sorted.size() / 2],
             sorted.empty() ? 0.0 : sorted.back());
    std::string text = line;
    if (recovered > 0) text += "; " + std::to_string(recovered) + " survivors carried on";
    return text;
  }
};

struct KillTrialSetup {
  int nranks = 4;
  int trials = 20;
  uint64_t seed = 14;
  /// Called in each child before its communicator is made (environment variables).
  std::function<void(int rank)> beforeInit;
  /// Makes the rank's communicator (default: ncclCommInitRank).
  std::function<ncclResult_t(ncclComm_t*, int nranks, const ncclUniqueId&, int rank)> init;
  /// Runs collectives until one fails; returns its result and counts successful calls.
  std::function<ncclResult_t(ncclComm_t, int rank, int nranks, uint64_t seed, int32_t* calls)> loop;
  /// Optional: what a survivor does after its error, knowing the victim (before the parent
  /// communicator is aborted); true when it carried on, else `*why` says what went wrong.
  std::function<bool(ncclComm_t, int rank, int nranks, int victim, std::string* why)> recover;
};

/// The rank trial `trial` of `setup` kills, and how long it waits first.
inline std::pair<int, int> victimAndDelayOf(const KillTrialSetup& setup, int trial) {
  std::mt19937_64 rng(setup.seed * 1000003 + static_cast<uint64_t>(trial));
  const int victim = static_cast<int>(rng() % static_cast<uint64_t>(setup.nranks));
  return {victim, static_cast<int>(rng() % 400)};
}
inline int victimOf(const KillTrialSetup& setup, int trial) {
  return victimAndDelayOf(setup, trial).first;
}

/// One trial; adds what it saw to `summary`. Failures are gtest failures of the caller.
inline void runKillTrial(const KillTrialSetup& setup, int trial, KillSummary* summary) {
  const int n = setup.nranks;
  const auto [victim, delayMs] = victimAndDelayOf(setup, trial);
  ncclUniqueId id{};
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess) << ncclGetLastError(nullptr);
  void* memory = mmap(nullptr, sizeof(RankReport) * n, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  auto* reports = static_cast<RankReport*>(memory);
  memset(memory, 0, sizeof(RankReport) * n);
  std::vector<pid_t> pids;
  StartGate gate;  // multiprocess.h: no fork while the id's root thread works
  ASSERT_TRUE(gate.ok());
  for (int rank = 0; rank < n; ++rank) {
    fflush(nullptr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      gate.pass();
      RankReport& me = reports[rank];
      if (setup.beforeInit) setup.beforeInit(rank);
      ncclComm_t comm = nullptr;
      const ncclResult_t made =
          setup.init ? setup.init(&comm, n, id, rank) : ncclCommInitRank(&comm, n, id, rank);
      if (made != ncclSuccess) {
        snprintf(me.error, sizeof(me.error), "init: %s", ncclGetLastError(nullptr));
        me.state.store(3);
        _exit(1);
      }
      me.state.store(1);
      me.result = setup.loop(comm, rank, n, setup.seed + static_cast<uint64_t>(trial), &me.calls);
      me.failedAtNs = monotonicNs();
      snprintf(me.error, sizeof(me.error), "%s", ncclGetLastError(comm));
      ncclResult_t async = ncclSuccess;
      me.asyncResult = ncclCommGetAsyncError(comm, &async) == ncclSuccess ? async : -1;
      if (setup.recover) {
        std::string why;
        me.recovered = setup.recover(comm, rank, n, victim, &why) ? 1 : 0;
        snprintf(me.recoverError, sizeof(me.recoverError), "%s", why.c_str());
      }
      me.state.store(2);
      (void)ncclCommAbort(comm);
      _exit(0);
    }
    pids.push_back(pid);
  }
  gate.open();
  // Everyone in the loop, then a random moment, then the kill.
  const auto readyBy = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool ready = false;
  bool initFailed = false;
  while (!ready && !initFailed && std::chrono::steady_clock::now() < readyBy) {
    ready = true;
    for (int r = 0; r < n; ++r) {
      if (reports[r].state.load() == 3) {
        ADD_FAILURE() << "trial " << trial << ", rank " << r << ": " << reports[r].error;
        initFailed = true;
      }
      ready = ready && reports[r].state.load() == 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(ready) << "trial " << trial << ": the ranks did not all start";
  std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
  const int64_t killedAt = monotonicNs();
  kill(pids[victim], SIGKILL);
  waitpid(pids[victim], nullptr, 0);

  const auto hangAt = std::chrono::steady_clock::now() + std::chrono::seconds(kHangSeconds);
  std::vector<bool> done(n, false);
  done[victim] = true;
  for (int left = n - 1; left > 0;) {
    for (int r = 0; r < n; ++r) {
      if (done[r] || waitpid(pids[r], nullptr, WNOHANG) == 0) continue;
      done[r] = true;
      --left;
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() > hangAt) {
      for (int r = 0; r < n; ++r) {
        if (done[r]) continue;
        ++summary->hangs;
        ADD_FAILURE() << "trial " << trial << ": rank " << r << " still runs " << kHangSeconds
                      << " s after rank " << victim << " was killed (" << reports[r].calls
                      << " calls done)";
        if (getenv("BRAID_TEST_BACKTRACE_HANGS")) {
          const std::string cmd = "gdb -p " + std::to_string(pids[r]) +
                                  " -batch -ex 'thread apply all bt' 2>&1 | tail -150";
          (void)!system(cmd.c_str());
        }
        kill(pids[r], SIGKILL);
        waitpid(pids[r], nullptr, 0);
        done[r] = true;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ++summary->trials;
  const std::string named = "rank " + std::to_string(victim) + " ";
  for (int r = 0; r < n; ++r) {
    if (r == victim || reports[r].state.load() != 2) continue;
    const RankReport& report = reports[r];
    const std::string error = report.error;
    ++summary->survivors;
    summary->msToError.push_back(
        static_cast<double>(std::max<int64_t>(0, report.failedAtNs - killedAt)) / 1e6);
    const bool names =
        error.find(named) != std::string::npos && error.find("is lost") != std::string::npos;
    if (names) ++summary->namedTheRank;
    if (setup.recover) {
      summary->recovered += report.recovered;
      EXPECT_EQ(report.recovered, 1)
          << "trial " << trial << ", rank " << r << " did not carry on: " << report.recoverError;
    }
    EXPECT_EQ(report.result, ncclRemoteError)
        << "trial " << trial << ", rank " << r << " (killed: " << victim << "): " << error;
    EXPECT_EQ(report.asyncResult, ncclRemoteError) << "trial " << trial << ", rank " << r;
    EXPECT_TRUE(names) << "trial " << trial << ", rank " << r << ": the error does not name rank "
                       << victim << " as lost: " << error;
  }
  munmap(memory, sizeof(RankReport) * n);
}

/// Every trial of `setup`; prints the summary line.
inline KillSummary runKillTrials(const KillTrialSetup& setup, const char* what) {
  KillSummary summary;
  for (int trial = 0; trial < setup.trials; ++trial) {
    runKillTrial(setup, trial, &summary);
    if (::testing::Test::HasFatalFailure()) break;
  }
  printf("[ kill trials ] %s: %s\n", what, summary.describe().c_str());
  return summary;
}

}  // namespace braid::testing
