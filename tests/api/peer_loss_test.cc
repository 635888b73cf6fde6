// A rank killed in the middle of a job (src/watch, src/comm/health.cc): 4 host processes run
// collectives until one is killed with SIGKILL at a random moment; every survivor's call must
// return ncclRemoteError naming the killed rank, long before BRAID_TIMEOUT_MS (left at its
// 10-minute default), on one host over shared memory and across "hosts" (BRAID_HOSTID per
// process) over sockets and over the verbs transport on the emulated HCA. 20 trials each.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "nccl.h"
#include "support/kill_trials.h"

namespace {

using braid::testing::KillTrialSetup;
using braid::testing::runKillTrials;

/// A job's mix of calls on host memory: all-reduces of 4 KiB to 16 MiB, broadcasts, all-gathers
/// and a ring exchange of sends and receives, in an order every rank draws from the same seed.
/// Rank r's input is all r + 1, so every output says where it came from, and each is checked.
ncclResult_t hostLoop(ncclComm_t comm, int rank, int nranks, uint64_t seed, int32_t* calls) {
  using braid::testing::outputHolds;
  std::mt19937_64 rng(seed);
  constexpr size_t kMaxCount = 4 << 20;  // floats: 16 MiB
  std::vector<float> in(kMaxCount, static_cast<float>(rank + 1));
  std::vector<float> out(kMaxCount * static_cast<size_t>(nranks));
  auto of = [](int r) { return static_cast<float>(r + 1); };
  for (;;) {
    const size_t count = size_t{1024} << (rng() % 13);
    ncclResult_t r = ncclSuccess;
    bool right = true;
    switch (rng() % 4) {
      case 0:
        r = ncclAllReduce(in.data(), out.data(), count, ncclFloat32, ncclSum, comm, nullptr);
        right = r != ncclSuccess ||
                outputHolds(out.data(), count, static_cast<float>(nranks * (nranks + 1) / 2),
                            "ncclAllReduce", rank);
        break;
      case 1: {
        const int root = static_cast<int>(rng() % 4) % nranks;
        r = ncclBroadcast(in.data(), out.data(), count, ncclFloat32, root, comm, nullptr);
        right = r != ncclSuccess || outputHolds(out.data(), count, of(root), "ncclBroadcast", rank);
        break;
      }
      case 2:
        r = ncclAllGather(in.data(), out.data(), count / 4, ncclFloat32, comm, nullptr);
        for (int from = 0; r == ncclSuccess && right && from < nranks; ++from) {
          right = outputHolds(out.data() + from * (count / 4), count / 4, of(from), "ncclAllGather",
                              rank);
        }
        break;
      default: {
        const int from = (rank - 1 + nranks) % nranks;
        r = ncclGroupStart();
        if (r == ncclSuccess) {
          (void)ncclSend(in.data(), count, ncclFloat32, (rank + 1) % nranks, comm, nullptr);
          (void)ncclRecv(out.data(), count, ncclFloat32, from, comm, nullptr);
          r = ncclGroupEnd();
        }
        right = r != ncclSuccess || outputHolds(out.data(), count, of(from), "ncclRecv", rank);
        break;
      }
    }
    if (r != ncclSuccess) return r;
    if (!right) return ncclInternalError;
    ++*calls;
  }
}

KillTrialSetup hostSetup() {
  KillTrialSetup setup;
  setup.loop = hostLoop;
  setup.beforeInit = [](int) { setenv("BRAID_HOST_COMM", "1", 1); };
  return setup;
}

TEST(KillTrials, OneHostSharedMemory) {
  KillTrialSetup setup = hostSetup();
  const auto summary = runKillTrials(setup, "4 host ranks on one host (shm)");
  EXPECT_EQ(summary.hangs, 0);
  EXPECT_EQ(summary.namedTheRank, summary.survivors);
}

TEST(KillTrials, TwoHostsSockets) {
  KillTrialSetup setup = hostSetup();
  setup.seed = 15;
  setup.beforeInit = [](int rank) {
    setenv("BRAID_HOST_COMM", "1", 1);
    setenv("BRAID_HOSTID", rank < 2 ? "kill-trials-a" : "kill-trials-b", 1);
    setenv("BRAID_NET", "Socket", 1);
  };
  const auto summary = runKillTrials(setup, "4 host ranks on 2 hosts (shm + sockets)");
  EXPECT_EQ(summary.hangs, 0);
  EXPECT_EQ(summary.namedTheRank, summary.survivors);
}

TEST(KillTrials, FourHostsEmulatedVerbs) {
  KillTrialSetup setup = hostSetup();
  setup.seed = 16;
  setup.beforeInit = [](int rank) {
    setenv("BRAID_HOST_COMM", "1", 1);
    setenv("BRAID_HOSTID", ("kill-trials-" + std::to_string(rank)).c_str(), 1);
    setenv("BRAID_IB_EMULATE", "1", 1);
    setenv("BRAID_NET", "IB", 1);
  };
  const auto summary = runKillTrials(setup, "4 host ranks on 4 hosts (emulated verbs)");
  EXPECT_EQ(summary.hangs, 0);
  EXPECT_EQ(summary.namedTheRank, summary.survivors);
}

}  // namespace
