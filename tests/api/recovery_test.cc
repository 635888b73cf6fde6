// Carrying on after a failure (issue 14's second point): ncclCommShrink after a rank is killed
// and on a healthy communicator, ncclCommRevoke of calls blocked in another thread, and
// ncclCommAbort from another thread unblocking a rank stuck in a collective, a finalize, a split
// and a non-blocking creation, and calls on a handle still being created. Ranks are host
// processes (threads in the last); BRAID_TIMEOUT_MS stays at its default
// of 10 minutes, so a call that returns within the hang guard was not ended by its deadline.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"
#include "support/asleep.h"
#include "support/kill_trials.h"
#include "support/multiprocess.h"
#include "support/shared_counter.h"

namespace {

using braid::testing::failsWith;
using braid::testing::KillTrialSetup;
using braid::testing::newId;
using braid::testing::runKillTrials;
using braid::testing::runProcesses;

std::string lastError(ncclComm_t comm) {
  const char* text = ncclGetLastError(comm);
  return text == nullptr ? "" : text;
}

/// An all-reduce whose every element must be 1 + 2 + ... + n: each rank adds its rank + 1.
bool allReduceWorks(ncclComm_t comm, std::string* why) {
  int rank = -1;
  int n = 0;
  if (ncclCommUserRank(comm, &rank) != ncclSuccess || ncclCommCount(comm, &n) != ncclSuccess) {
    *why = "rank or count: " + lastError(comm);
    return false;
  }
  std::vector<float> in(4096, static_cast<float>(rank + 1));
  std::vector<float> out(in.size(), -1.0f);
  if (ncclAllReduce(in.data(), out.data(), in.size(), ncclFloat32, ncclSum, comm, nullptr) !=
      ncclSuccess) {
    *why = "all-reduce: " + lastError(comm);
    return false;
  }
  const float expected = static_cast<float>(n * (n + 1) / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] != expected) {
      *why = "element " + std::to_string(i) + " is " + std::to_string(out[i]) + ", expected " +
             std::to_string(expected);
      return false;
    }
  }
  return true;
}

/// Runs all-reduces until one fails, checking each one's sum (rank r adds r + 1).
ncclResult_t allReduceLoop(ncclComm_t comm, int rank, int nranks, uint64_t, int32_t* calls) {
  std::vector<float> in(1 << 20, static_cast<float>(rank + 1));
  std::vector<float> out(in.size());
  const float sum = static_cast<float>(nranks * (nranks + 1) / 2);
  for (;;) {
    const ncclResult_t r =
        ncclAllReduce(in.data(), out.data(), in.size(), ncclFloat32, ncclSum, comm, nullptr);
    if (r != ncclSuccess) return r;
    if (!braid::testing::outputHolds(out.data(), out.size(), sum, "ncclAllReduce", rank)) {
      return ncclInternalError;
    }
    ++*calls;
  }
}

/// The survivors shrink without the killed rank and check the new communicator's all-reduce.
bool shrinkWithout(ncclComm_t comm, int rank, int nranks, int victim, std::string* why) {
  int exclude[1] = {victim};
  ncclComm_t smaller = nullptr;
  if (ncclCommShrink(comm, exclude, 1, &smaller, nullptr, NCCL_SHRINK_ABORT) != ncclSuccess) {
    *why = "shrink: " + lastError(comm);
    return false;
  }
  int newRank = -1;
  int newCount = 0;
  (void)ncclCommUserRank(smaller, &newRank);
  (void)ncclCommCount(smaller, &newCount);
  const int expectedRank = rank < victim ? rank : rank - 1;
  if (newCount != nranks - 1 || newRank != expectedRank) {
    *why = "rank " + std::to_string(newRank) + " of " + std::to_string(newCount) + ", expected " +
           std::to_string(expectedRank) + " of " + std::to_string(nranks - 1);
    return false;
  }
  const bool works = allReduceWorks(smaller, why) && allReduceWorks(smaller, why);
  if (ncclCommDestroy(smaller) != ncclSuccess) {
    *why = "destroy: " + lastError(smaller);
    return false;
  }
  return works;
}

TEST(Shrink, SurvivorsOfAKillCarryOn) {
  KillTrialSetup setup;
  setup.trials = 5;
  setup.seed = 31;
  setup.beforeInit = [](int) { setenv("BRAID_HOST_COMM", "1", 1); };
  setup.loop = allReduceLoop;
  setup.recover = shrinkWithout;
  const auto summary = runKillTrials(setup, "shrink after a kill, 4 host ranks");
  EXPECT_EQ(summary.hangs, 0);
  EXPECT_EQ(summary.recovered, summary.survivors);
}

TEST(Shrink, AcrossHostsSurvivorsOfAKillCarryOn) {
  KillTrialSetup setup;
  setup.trials = 3;
  setup.seed = 32;
  setup.beforeInit = [](int rank) {
    setenv("BRAID_HOST_COMM", "1", 1);
    setenv("BRAID_HOSTID", rank % 2 == 0 ? "shrink-a" : "shrink-b", 1);
  };
  setup.loop = allReduceLoop;
  setup.recover = shrinkWithout;
  const auto summary = runKillTrials(setup, "shrink after a kill, 4 host ranks on 2 hosts");
  EXPECT_EQ(summary.hangs, 0);
  EXPECT_EQ(summary.recovered, summary.survivors);
}

// NCCL_SHRINK_DEFAULT on a healthy communicator: rank 1 leaves the job in order, the other three
// carry on without it, renumbered 0, 1, 2.
TEST(Shrink, HealthyCommunicatorWithoutOneRank) {
  const ncclUniqueId id = newId();
  runProcesses(4, [&](int rank) {
    setenv("BRAID_HOST_COMM", "1", 1);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, 4, id, rank), ncclSuccess) << lastError(nullptr);
    std::string why;
    ASSERT_TRUE(allReduceWorks(comm, &why)) << why;
    if (rank == 1) {
      EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
      return;
    }
    int exclude[1] = {1};
    ncclComm_t smaller = nullptr;
    ASSERT_EQ(ncclCommShrink(comm, exclude, 1, &smaller, nullptr, NCCL_SHRINK_DEFAULT), ncclSuccess)
        << lastError(comm);
    int newRank = -1;
    ASSERT_EQ(ncclCommUserRank(smaller, &newRank), ncclSuccess);
    EXPECT_EQ(newRank, rank == 0 ? 0 : rank - 1);
    EXPECT_TRUE(allReduceWorks(smaller, &why)) << why;
    EXPECT_EQ(ncclCommDestroy(smaller), ncclSuccess);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

TEST(Shrink, BadArgumentsAreRefused) {
  const ncclUniqueId id = newId();
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess) << lastError(nullptr);
  ncclComm_t out = nullptr;
  int self[1] = {0};
  int outside[1] = {3};
  int twice[2] = {0, 0};
  EXPECT_TRUE(failsWith([&] { return ncclCommShrink(comm, self, 0, &out, nullptr, 0); },
                        ncclInvalidArgument, {"excludeRanksCount"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommShrink(comm, nullptr, 1, &out, nullptr, 0); },
                        ncclInvalidArgument, {"excludeRanksList is NULL"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommShrink(comm, self, 1, nullptr, nullptr, 0); },
                        ncclInvalidArgument, {"newcomm is NULL"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommShrink(comm, self, 1, &out, nullptr, 7); },
                        ncclInvalidArgument, {"shrinkFlags"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommShrink(comm, outside, 1, &out, nullptr, 0); },
                        ncclInvalidArgument, {"excluded rank 3"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommShrink(comm, twice, 2, &out, nullptr, 0); },
                        ncclInvalidArgument, {"excluded twice"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommShrink(comm, self, 1, &out, nullptr, 0); },
                        ncclInvalidArgument, {"must not call ncclCommShrink"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommShrink(nullptr, self, 1, &out, nullptr, 0); },
                        ncclInvalidArgument));
  EXPECT_EQ(out, nullptr);
  std::string why;
  EXPECT_TRUE(allReduceWorks(comm, &why)) << why;  // nothing broke it
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

// Rank 1 never calls: rank 0's all-reduce waits for it until a second thread revokes the
// communicator. The waiting call returns an error at once, the revoke succeeds, and afterwards
// collectives and finalize are refused while a split still works (both ranks revoke first).
TEST(Revoke, StopsACallBlockedInAnotherThreadAndLeavesSplit) {
  const ncclUniqueId id = newId();
  braid::testing::SharedCounter revoked;
  runProcesses(2, [&](int rank) {
    setenv("BRAID_HOST_COMM", "1", 1);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, 2, id, rank), ncclSuccess) << lastError(nullptr);
    std::vector<float> in(1024, 1.0f), out(1024);
    if (rank == 0) {
      ncclResult_t blocked = ncclSuccess;
      std::atomic<pid_t> callerTid{0};
      std::thread caller([&] {
        callerTid.store(braid::testing::threadId());
        blocked =
            ncclAllReduce(in.data(), out.data(), in.size(), ncclFloat32, ncclSum, comm, nullptr);
      });
      while (callerTid.load() == 0) std::this_thread::yield();
      EXPECT_TRUE(braid::testing::waitUntilAsleep(getpid(), callerTid.load()))
          << "the all-reduce never waited for rank 1";
      const auto start = std::chrono::steady_clock::now();
      EXPECT_EQ(ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT), ncclSuccess) << lastError(comm);
      caller.join();
      EXPECT_LT(std::chrono::steady_clock::now() - start, braid::testing::kHangGuard);
      EXPECT_EQ(blocked, ncclRemoteError);
      revoked.add();  // rank 1 revokes only now, rank 0's call stopped by rank 0's own revoke
    } else {
      EXPECT_TRUE(revoked.waitFor(1));
      EXPECT_EQ(ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT), ncclSuccess) << lastError(comm);
    }
    ncclResult_t async = ncclInternalError;
    EXPECT_EQ(ncclCommGetAsyncError(comm, &async), ncclSuccess);
    EXPECT_EQ(async, ncclSuccess) << "a revoked communicator is quiet, not failed";
    EXPECT_TRUE(failsWith(
        [&] {
          return ncclAllReduce(in.data(), out.data(), 8, ncclFloat32, ncclSum, comm, nullptr);
        },
        ncclInvalidUsage, {"revoked"}, comm));
    EXPECT_TRUE(failsWith([&] { return ncclCommFinalize(comm); }, ncclInvalidUsage, {"revoked"}));
    EXPECT_TRUE(failsWith([&] { return ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT); },
                          ncclInvalidUsage, {"revoked already"}));
    ncclComm_t fresh = nullptr;
    ASSERT_EQ(ncclCommSplit(comm, 0, rank, &fresh, nullptr), ncclSuccess) << lastError(comm);
    std::string why;
    EXPECT_TRUE(allReduceWorks(fresh, &why)) << why;
    EXPECT_EQ(ncclCommDestroy(fresh), ncclSuccess);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

TEST(Revoke, BadFlagsAreRefused) {
  const ncclUniqueId id = newId();
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess) << lastError(nullptr);
  EXPECT_TRUE(failsWith([&] { return ncclCommRevoke(comm, 1); }, ncclInvalidArgument,
                        {"NCCL_REVOKE_DEFAULT"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommRevoke(nullptr, 0); }, ncclInvalidArgument));
  std::string why;
  EXPECT_TRUE(allReduceWorks(comm, &why)) << why;
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

/// Rank 0 of 2 makes `stuck` call while rank 1 stays away; another thread aborts rank 0's
/// communicator. The stuck call must return an error well before the 10-minute timeout.
void expectAbortUnblocks(const char* what, const std::function<ncclResult_t(ncclComm_t)>& stuck) {
  SCOPED_TRACE(what);
  const ncclUniqueId id = newId();
  braid::testing::SharedCounter aborted;
  runProcesses(2, [&](int rank) {
    setenv("BRAID_HOST_COMM", "1", 1);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, 2, id, rank), ncclSuccess) << lastError(nullptr);
    if (rank == 1) {
      // Stays away until rank 0's call was aborted, then leaves.
      EXPECT_TRUE(aborted.waitFor(1));
      EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
      return;
    }
    ncclResult_t result = ncclSuccess;
    std::atomic<bool> returned{false};
    std::atomic<pid_t> callerTid{0};
    std::thread caller([&] {
      callerTid.store(braid::testing::threadId());
      result = stuck(comm);
      returned.store(true);
    });
    while (callerTid.load() == 0) std::this_thread::yield();
    EXPECT_TRUE(braid::testing::waitUntilAsleep(getpid(), callerTid.load()))
        << what << " never waited";
    EXPECT_FALSE(returned.load()) << what << " did not wait for rank 1";
    const auto abortedAt = std::chrono::steady_clock::now();
    EXPECT_EQ(ncclCommAbort(comm), ncclSuccess);
    caller.join();
    EXPECT_NE(result, ncclSuccess) << what;
    EXPECT_LT(std::chrono::steady_clock::now() - abortedAt, braid::testing::kHangGuard) << what;
    aborted.add();
  });
}

// A rank that aborts its communicator instead of joining an all-reduce leaves saying so, and its
// peers' calls, which cannot finish without it, end at once naming it, long before
// BRAID_TIMEOUT_MS (left at its 10 minutes).
TEST(Abort, ARankThatAbortsInsteadOfCallingEndsItsPeersCallsNamingIt) {
  const ncclUniqueId id = newId();
  runProcesses(
      3,
      [&](int rank) {
        setenv("BRAID_HOST_COMM", "1", 1);
        ncclComm_t comm = nullptr;
        ASSERT_EQ(ncclCommInitRank(&comm, 3, id, rank), ncclSuccess) << lastError(nullptr);
        std::string why;
        ASSERT_TRUE(allReduceWorks(comm, &why)) << why;
        if (rank == 2) {
          EXPECT_EQ(ncclCommAbort(comm), ncclSuccess);
          return;
        }
        std::vector<float> data(1 << 16, 1.0f);
        const auto start = std::chrono::steady_clock::now();
        const ncclResult_t r =
            ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat, ncclSum, comm, nullptr);
        const auto took = std::chrono::steady_clock::now() - start;
        EXPECT_EQ(r, ncclRemoteError);
        const std::string text = lastError(comm);
        EXPECT_NE(text.find("rank 2"), std::string::npos) << text;
        EXPECT_NE(text.find("aborted the communicator"), std::string::npos) << text;
        EXPECT_LT(took, std::chrono::seconds(10));
        EXPECT_EQ(ncclCommAbort(comm), ncclSuccess);
      },
      60);
}

TEST(Abort, FromAnotherThreadUnblocksACollective) {
  expectAbortUnblocks("all-reduce", [](ncclComm_t comm) {
    std::vector<float> data(1 << 16, 1.0f);
    return ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm,
                         nullptr);
  });
}

TEST(Abort, FromAnotherThreadUnblocksARecv) {
  expectAbortUnblocks("recv", [](ncclComm_t comm) {
    std::vector<float> data(1 << 16);
    return ncclRecv(data.data(), data.size(), ncclFloat32, 1, comm, nullptr);
  });
}

TEST(Abort, FromAnotherThreadUnblocksAFinalize) {
  expectAbortUnblocks("finalize", [](ncclComm_t comm) { return ncclCommFinalize(comm); });
}

TEST(Abort, FromAnotherThreadUnblocksASplit) {
  expectAbortUnblocks("split", [](ncclComm_t comm) {
    ncclComm_t child = nullptr;
    return ncclCommSplit(comm, 0, 0, &child, nullptr);
  });
}

// Starts rank 0 of 2 with blocking = 0; rank 1 is the caller's to make, or never made.
void startNonBlockingRank0(const ncclUniqueId& id, ncclComm_t* comm) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  const ncclResult_t started = ncclCommInitRankConfig(comm, 2, id, 0, &config);
  ASSERT_TRUE(started == ncclInProgress || started == ncclSuccess) << lastError(nullptr);
  ASSERT_NE(*comm, nullptr);
}

// A non-blocking creation whose peer never comes: ncclCommAbort on its handle ends it at once,
// where the creation alone would wait for BRAID_TIMEOUT_MS.
TEST(Abort, EndsANonBlockingCreationWhosePeerNeverComes) {
  setenv("BRAID_HOST_COMM", "1", 1);
  const ncclUniqueId id = newId();
  ncclComm_t comm = nullptr;
  ASSERT_NO_FATAL_FAILURE(startNonBlockingRank0(id, &comm));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ncclResult_t state = ncclSuccess;
  ASSERT_EQ(ncclCommGetAsyncError(comm, &state), ncclSuccess);
  EXPECT_EQ(state, ncclInProgress) << "rank 1 never came: the creation must still wait";
  const auto start = std::chrono::steady_clock::now();
  std::thread aborter([&] { EXPECT_EQ(ncclCommAbort(comm), ncclSuccess); });
  aborter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, braid::testing::kHangGuard);
  unsetenv("BRAID_HOST_COMM");
}

// A call on a handle whose non-blocking creation has not ended fails at once with
// ncclInvalidArgument, as NCCL's do (its caller may be the thread that must still create the
// other rank), and leaves the creation running: once rank 1 comes, the handle works.
TEST(NonBlockingCreation, CallsBeforeItEndsFailAtOnceAndItCarriesOn) {
  setenv("BRAID_HOST_COMM", "1", 1);
  const ncclUniqueId id = newId();
  ncclComm_t comm = nullptr;
  ASSERT_NO_FATAL_FAILURE(startNonBlockingRank0(id, &comm));
  const std::vector<std::string> why = {"still being created", "ncclCommGetAsyncError"};
  float value = 1.0f;
  int number = -1;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(failsWith([&] { return ncclCommCount(comm, &number); }, ncclInvalidArgument, why));
  EXPECT_TRUE(failsWith([&] { return ncclCommUserRank(comm, &number); }, ncclInvalidArgument, why));
  EXPECT_TRUE(failsWith(
      [&] { return ncclAllReduce(&value, &value, 1, ncclFloat32, ncclSum, comm, nullptr); },
      ncclInvalidArgument, why));
  EXPECT_TRUE(failsWith([&] { return ncclSend(&value, 1, ncclFloat32, 1, comm, nullptr); },
                        ncclInvalidArgument, why));
  EXPECT_TRUE(failsWith([&] { return ncclCommFinalize(comm); }, ncclInvalidArgument, why));
  EXPECT_LT(std::chrono::steady_clock::now() - start, braid::testing::kHangGuard);
  ncclResult_t state = ncclSuccess;
  ASSERT_EQ(ncclCommGetAsyncError(comm, &state), ncclSuccess);
  ASSERT_EQ(state, ncclInProgress) << "rank 1 has not come: the creation cannot have ended";

  std::string peerWhy;
  bool peerWorked = false;
  std::thread peer([&] {
    ncclComm_t other = nullptr;
    if (ncclCommInitRank(&other, 2, id, 1) != ncclSuccess) {
      peerWhy = "rank 1's creation: " + lastError(nullptr);
      return;
    }
    peerWorked = allReduceWorks(other, &peerWhy);
    if (ncclCommDestroy(other) != ncclSuccess) peerWorked = false;
  });
  while (ncclCommGetAsyncError(comm, &state) == ncclSuccess && state == ncclInProgress) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(state, ncclSuccess) << lastError(comm);
  std::string why0;
  EXPECT_TRUE(state == ncclSuccess && allReduceWorks(comm, &why0)) << why0;
  peer.join();
  EXPECT_TRUE(peerWorked) << peerWhy;
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  unsetenv("BRAID_HOST_COMM");
}

}  // namespace
