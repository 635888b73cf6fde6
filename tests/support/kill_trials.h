// Killing a rank of a running job and checking what the survivors see (issue 14's first point).
//
// One trial forks nranks processes that make a communicator and then run collectives in a loop
// until a call fails. The victim dies at one of three moments (KillWhen): in the loop, after a
// random delay; idle after init, before any rank's first call; or at a named point of setup
// (base/test_fault.h), where it kills itself. Every survivor must then return
// ncclRemoteError, with an error text that names the killed rank as lost, well before
// BRAID_TIMEOUT_MS (left at its default of 10 minutes): a survivor still running after
// kHangSeconds is a hang, and one that crashed or exited otherwise fails the trial with how it
// ended. The survivors write what they saw, and when (CLOCK_MONOTONIC, which all processes
// share), into shared memory, and the test measures each survivor's time to error from the kill:
// from just before it sends SIGKILL, or, where the victim kills itself at a point, from the moment
// the point recorded (BRAID_TEST_FAULT_TIME_FILE, base/test_fault.h). It prints the figures and
// bounds each generously (KillTrialSetup::errorBoundMs): detection takes milliseconds, and a
// survivor that took longer heard of the loss some slower way than the watch's word.
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
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nccl.h"
#include "support/kill_diagnostics.h"
#include "support/multiprocess.h"

namespace braid::testing {

/// Far below the default BRAID_TIMEOUT_MS (600 s) and far above what detection takes: a survivor
/// that has not returned by then is waiting for the timeout, i.e. a hang.
inline constexpr int kHangSeconds = 30;

/// The default bound on a survivor's time from the kill to its error. The watch's word of a death
/// takes milliseconds; the survivor's own call adds its work to it, a few hundred ms at most for
/// the trials' 16 MiB all-reduces on a loaded 2-core VM (docs/reliability.md, "Fault to error").
/// 10 s is generous for both and half the heartbeat's silence (BRAID_HEARTBEAT_TIMEOUT_MS, 20 s
/// by default), so a survivor that heard of the loss only through the heartbeat fails.
inline constexpr int kErrorBoundMs = 10000;

/// Survivors still running this long after the kill make the trial print what it can see of
/// why (kill_diagnostics.h): a diagnosis only, never a verdict.
inline constexpr int kSlowKillMs = 2000;

inline int64_t clockNs(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}
inline int64_t monotonicNs() { return clockNs(CLOCK_MONOTONIC); }

/// The moment a fault injected by the library (base/test_fault.h) was recorded in `path`: the
/// first line's CLOCK_REALTIME, on CLOCK_MONOTONIC as monotonicNs() reads it; 0 when there is
/// none.
inline int64_t injectedAtMonotonicNs(const std::string& path) {
  FILE* file = fopen(path.c_str(), "r");
  if (file == nullptr) return 0;
  long long realtime = 0;
  const bool read = fscanf(file, "%lld", &realtime) == 1;
  fclose(file);
  if (!read) return 0;
  return realtime - (clockNs(CLOCK_REALTIME) - monotonicNs());
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
  int errorBoundMs = kErrorBoundMs;
  std::vector<double> msToError;
  std::string describe() const {
    std::vector<double> sorted = msToError;
    std::sort(sorted.begin(), sorted.end());
    char line[256];
    snprintf(line, sizeof(line),
             "%d trials, %d hangs, %d/%d survivor errors named the killed rank; time from kill "
             "to error: min %.1f ms, median %.1f ms, max %.1f ms (bound %d ms)",
             trials, hangs, namedTheRank, survivors, sorted.empty() ? 0.0 : sorted.front(),
             sorted.empty() ? 0.0 : sorted[sorted.size() / 2], sorted.empty() ? 0.0 : sorted.back(),
             errorBoundMs);
    std::string text = line;
    if (recovered > 0) text += "; " + std::to_string(recovered) + " survivors carried on";
    return text;
  }
};

/// When the victim dies.
enum class KillWhen {
  /// Every rank is in its loop; the test kills the victim after a random delay (0-400 ms).
  kInLoop,
  /// Fixed order: the victim finishes init and never calls a collective; the test kills it once
  /// every rank has finished init, and only then do the survivors start their loops, so their
  /// first calls connect (lazily) to a rank that is already dead.
  kIdleAfterInit,
  /// The victim kills itself at the test point `dieAt` (base/test_fault.h), armed before its
  /// init or, with `armAfterInit`, once init has returned. A survivor may then fail in init: its
  /// init error must name the rank as its loop's would.
  kAtPoint,
};

/// A survivor's loop checks every call's output with this before the kill: `count` elements of
/// `out` from `first` must all be `value`. A call that returned success with wrong data fails the
/// loop on its own (the loop returns ncclInternalError, and this says why on stderr), never taken
/// for the loss.
inline bool outputHolds(const float* out, size_t count, float value, const char* call, int rank) {
  for (size_t i = 0; i < count; ++i) {
    if (out[i] != value) {
      fprintf(stderr, "rank %d: %s succeeded with element %zu = %g, expected %g\n", rank, call, i,
              static_cast<double>(out[i]), static_cast<double>(value));
      return false;
    }
  }
  return true;
}

struct KillTrialSetup {
  int nranks = 4;
  int trials = 20;
  uint64_t seed = 14;
  KillWhen when = KillWhen::kInLoop;
  /// The rank to kill; -1 draws one per trial.
  int victim = -1;
  /// kAtPoint: the point, and whether it is armed after init rather than before.
  std::string dieAt;
  bool armAfterInit = false;
  /// Called in each child before its communicator is made (environment variables).
  std::function<void(int rank)> beforeInit;
  /// Makes the rank's communicator (default: ncclCommInitRank).
  std::function<ncclResult_t(ncclComm_t*, int nranks, const ncclUniqueId&, int rank)> init;
  /// Runs collectives until one fails; returns its result and counts successful calls.
  std::function<ncclResult_t(ncclComm_t, int rank, int nranks, uint64_t seed, int32_t* calls)> loop;
  /// Optional: what a survivor does after its error, knowing the victim (before the parent
  /// communicator is aborted); true when it carried on, else `*why` says what went wrong.
  std::function<bool(ncclComm_t, int rank, int nranks, int victim, std::string* why)> recover;
  /// A survivor whose call returned later than this after the kill fails the trial.
  int errorBoundMs = kErrorBoundMs;
  /// kInLoop and kIdleAfterInit: the test process takes copies of the victim's sockets before
  /// the kill and keeps them to the trial's end, as when the kernel is slow to tear the victim
  /// down (its sockets close only after that): a trial then fails where none could be taken.
  bool keepVictimSocketsOpen = false;
};

/// The rank trial `trial` of `setup` kills, and how long it waits first.
inline std::pair<int, int> victimAndDelayOf(const KillTrialSetup& setup, int trial) {
  std::mt19937_64 rng(setup.seed * 1000003 + static_cast<uint64_t>(trial));
  const int drawn = static_cast<int>(rng() % static_cast<uint64_t>(setup.nranks));
  const int delayMs = static_cast<int>(rng() % 400);
  return {setup.victim >= 0 ? setup.victim : drawn, delayMs};
}
inline int victimOf(const KillTrialSetup& setup, int trial) {
  return victimAndDelayOf(setup, trial).first;
}

/// How a child ended, in words: "exited with status 0", "killed by signal 11 (Segmentation fault)".
inline std::string describeEnd(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

/// Waits for `pid` up to `seconds`; true with its wait status in `*status` when it ended.
inline bool waitFor(pid_t pid, int seconds, int* status) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (waitpid(pid, status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

/// One trial; adds what it saw to `summary`. Failures are gtest failures of the caller. Every
/// survivor is accounted for: it returned an error that names the victim as lost (from its loop,
/// or from init where the victim died during init), or the trial fails and says how it ended.
inline void runKillTrial(const KillTrialSetup& setup, int trial, KillSummary* summary) {
  const int n = setup.nranks;
  const auto [victim, delayMs] = victimAndDelayOf(setup, trial);
  const bool atPoint = setup.when == KillWhen::kAtPoint;
  ncclUniqueId id{};
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess) << ncclGetLastError(nullptr);
  // The ranks' reports, then one word: the victim is dead (kIdleAfterInit's survivors wait for it).
  const size_t bytes = sizeof(RankReport) * n + sizeof(std::atomic<int32_t>);
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  memset(memory, 0, bytes);
  auto* reports = static_cast<RankReport*>(memory);
  auto* victimDead = reinterpret_cast<std::atomic<int32_t>*>(reports + n);
  // Where a victim that kills itself at a point records the moment it does.
  std::string faultFile;
  if (atPoint) {
    char path[] = "/tmp/braid-kill-trial-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0) << strerror(errno);
    close(fd);
    faultFile = path;
  }
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
      if (atPoint && rank == victim) setenv("BRAID_TEST_FAULT_TIME_FILE", faultFile.c_str(), 1);
      if (atPoint && rank == victim && !setup.armAfterInit) {
        setenv("BRAID_TEST_DIE_AT", setup.dieAt.c_str(), 1);
      }
      ncclComm_t comm = nullptr;
      const ncclResult_t made =
          setup.init ? setup.init(&comm, n, id, rank) : ncclCommInitRank(&comm, n, id, rank);
      if (made != ncclSuccess) {
        me.result = made;
        me.failedAtNs = monotonicNs();
        snprintf(me.error, sizeof(me.error), "init: %s", ncclGetLastError(nullptr));
        me.state.store(3);
        _exit(1);
      }
      me.state.store(1);
      if (setup.when == KillWhen::kIdleAfterInit) {
        if (rank == victim) {
          for (;;) pause();  // never a call: the test kills it here
        }
        while (victimDead->load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (atPoint && rank == victim && setup.armAfterInit) {
        setenv("BRAID_TEST_DIE_AT", setup.dieAt.c_str(), 1);
      }
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
  int64_t killedAt = 0;
  // The victim's own sockets (less those every rank inherited from this process), and when its
  // process was seen to end: for the diagnosis of a slow trial.
  std::set<std::string> victimSockets;
  std::vector<int> keptSockets;  // KillTrialSetup::keepVictimSocketsOpen
  double reapedMs = -1;
  bool diagnosed = false;
  // Once, when survivors still run kSlowKillMs after the kill: what can be seen of why.
  auto diagnoseIfSlow = [&, victim = victim](const std::vector<bool>& done) {
    if (diagnosed || monotonicNs() - killedAt <= int64_t{kSlowKillMs} * 1000000) return;
    diagnosed = true;
    std::vector<std::pair<int, pid_t>> running;
    for (int r = 0; r < n; ++r) {
      if (!done[r] && r != victim) running.emplace_back(r, pids[r]);
    }
    const bool ended = atPoint || reapedMs >= 0;
    printf("%s",
           describeSlowKill(trial, kSlowKillMs, victim, pids[victim], ended, victimSockets, running)
               .c_str());
    fflush(stdout);
  };
  std::vector<int> ends(n, -1);  // wait statuses
  std::vector<bool> done(n, false);
  done[victim] = true;
  if (atPoint) {
    // The victim dies on its own; a victim that never reaches its point would leave every rank
    // running, which is a broken test, not a pass.
    int status = 0;
    bool diedAtPoint = false;
    if (!waitFor(pids[victim], kHangSeconds, &status)) {
      ADD_FAILURE() << "trial " << trial << ": rank " << victim << " never reached the point "
                    << setup.dieAt << " (BRAID_TEST_DIE_AT) in " << kHangSeconds << " s";
      kill(pids[victim], SIGKILL);
      waitpid(pids[victim], &status, 0);
    } else if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
      ADD_FAILURE() << "trial " << trial << ": rank " << victim << " was to die at " << setup.dieAt
                    << " but " << describeEnd(status) << " (state " << reports[victim].state.load()
                    << ": " << reports[victim].error << ")";
    } else {
      diedAtPoint = true;
    }
    // The moment the victim recorded as it raised SIGKILL; for a victim that died otherwise
    // (said above), the moment its end was seen.
    killedAt = injectedAtMonotonicNs(faultFile);
    if (killedAt == 0) {
      if (diedAtPoint) {
        ADD_FAILURE() << "trial " << trial << ": rank " << victim << " died at " << setup.dieAt
                      << " but recorded no moment in " << faultFile;
      }
      killedAt = monotonicNs();
    }
    unlink(faultFile.c_str());
  } else {
    // Everyone in the loop (or, kIdleAfterInit, past init), then a random moment, then the kill.
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
    if (setup.when == KillWhen::kInLoop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
    }
    victimSockets = socketsOf(pids[victim]);
    for (const std::string& inherited : socketsOf(pids[(victim + 1) % n])) {
      victimSockets.erase(inherited);
    }
    if (setup.keepVictimSocketsOpen) {
      keptSockets = copySocketsOf(pids[victim]);
      EXPECT_FALSE(keptSockets.empty()) << "trial " << trial << ": no copy of rank " << victim
                                        << "'s sockets could be taken (pidfd_getfd)";
    }
    killedAt = monotonicNs();  // just before the kill: its own time counts against the ranks
    kill(pids[victim], SIGKILL);
    while (waitpid(pids[victim], nullptr, WNOHANG) == 0) {
      diagnoseIfSlow(std::vector<bool>(n, false));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    reapedMs = static_cast<double>(monotonicNs() - killedAt) / 1e6;
    victimDead->store(1);
  }

  const auto hangAt = std::chrono::steady_clock::now() + std::chrono::seconds(kHangSeconds);
  for (int left = n - 1; left > 0;) {
    for (int r = 0; r < n; ++r) {
      if (done[r] || waitpid(pids[r], &ends[r], WNOHANG) == 0) continue;
      done[r] = true;
      --left;
    }
    if (left == 0) break;
    diagnoseIfSlow(done);
    if (std::chrono::steady_clock::now() > hangAt) {
      for (int r = 0; r < n; ++r) {
        if (done[r]) continue;
        ++summary->hangs;
        ADD_FAILURE() << "trial " << trial << ": rank " << r << " still runs " << kHangSeconds
                      << " s after rank " << victim << " was killed (" << reports[r].calls
                      << " calls done, state " << reports[r].state.load()
                      << ": 0 starting, 1 running, 2 returned its error)";
        if (getenv("BRAID_TEST_BACKTRACE_HANGS")) {
          const std::string cmd = "gdb -p " + std::to_string(pids[r]) +
                                  " -batch -ex 'thread apply all bt' 2>&1 | tail -150";
          (void)!system(cmd.c_str());
        }
        kill(pids[r], SIGKILL);
        waitpid(pids[r], nullptr, 0);
        done[r] = true;
        ends[r] = -2;  // a hang, counted above
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ++summary->trials;
  summary->errorBoundMs = setup.errorBoundMs;
  std::string figures;  // each survivor's time from the kill to its error, printed below
  const std::string named = "rank " + std::to_string(victim) + " ";
  for (int r = 0; r < n; ++r) {
    if (r == victim || ends[r] == -2) continue;
    const RankReport& report = reports[r];
    const int state = report.state.load();
    const std::string error = report.error;
    ++summary->survivors;
    // Returned from its loop (state 2, exit 0) or, where the victim died during init, failed in
    // init (state 3, exit 1); anything else is a survivor that crashed or was lost itself.
    const bool returned = state == 2 && WIFEXITED(ends[r]) && WEXITSTATUS(ends[r]) == 0;
    const bool initFailed =
        atPoint && state == 3 && WIFEXITED(ends[r]) && WEXITSTATUS(ends[r]) == 1;
    if (!returned && !initFailed) {
      ADD_FAILURE() << "trial " << trial << ", rank " << r << " (killed: " << victim << ") "
                    << describeEnd(ends[r]) << " in state " << state
                    << " (0 starting, 1 running, 2 returned its error, 3 init failed) "
                    << "instead of returning the loss" << (error.empty() ? "" : ": ") << error;
      continue;
    }
    const double msToError =
        static_cast<double>(std::max<int64_t>(0, report.failedAtNs - killedAt)) / 1e6;
    summary->msToError.push_back(msToError);
    char figure[64];
    snprintf(figure, sizeof(figure), "%srank %d %.1f ms", figures.empty() ? "" : ", ", r,
             msToError);
    figures += figure;
    EXPECT_LT(msToError, setup.errorBoundMs)
        << "trial " << trial << ", rank " << r << " returned its error " << msToError
        << " ms after rank " << victim << " was killed, over the bound of " << setup.errorBoundMs
        << " ms: something slower than the watch's word of the death ended its call: " << error;
    const bool names =
        error.find(named) != std::string::npos && error.find("is lost") != std::string::npos;
    if (names) ++summary->namedTheRank;
    if (setup.recover && returned) {
      summary->recovered += report.recovered;
      EXPECT_EQ(report.recovered, 1)
          << "trial " << trial << ", rank " << r << " did not carry on: " << report.recoverError;
    }
    EXPECT_EQ(report.result, ncclRemoteError)
        << "trial " << trial << ", rank " << r << " (killed: " << victim << "): " << error;
    if (returned) {
      EXPECT_EQ(report.asyncResult, ncclRemoteError) << "trial " << trial << ", rank " << r;
    }
    EXPECT_TRUE(names) << "trial " << trial << ", rank " << r << ": the error does not name rank "
                       << victim << " as lost: " << error;
  }
  char reaped[64] = "";
  if (reapedMs >= 0)
    snprintf(reaped, sizeof(reaped), " (its process ended %.1f ms after)", reapedMs);
  printf("[ kill trial %d ] rank %d killed%s; from the kill to the error: %s\n", trial, victim,
         reaped, figures.empty() ? "no survivor returned" : figures.c_str());
  for (int fd : keptSockets) close(fd);
  munmap(memory, bytes);
}

/// Every trial of `setup`; prints the summary line.
inline KillSummary runKillTrials(const KillTrialSetup& setup, const char* what) {
  KillSummary summary;
  for (int trial = 0; trial < setup.trials; ++trial) {
    runKillTrial(setup, trial, &summary);
    if (::testing::Test::HasFatalFailure()) break;
  }
  printf("[ kill trials ] %s: %s\n", what, summary.describe().c_str());
  // Every survivor of every trial is in the count: none may go missing from the verdict.
  EXPECT_EQ(summary.survivors + summary.hangs, summary.trials * (setup.nranks - 1))
      << "survivors unaccounted for";
  return summary;
}

}  // namespace braid::testing
