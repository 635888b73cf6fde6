// A rank killed in the middle of a job (src/watch, src/comm_peer_loss.cc): 4 host processes run
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
ncclResult_t hostLoop(ncclComm_t comm, int rank, int nranks, uint64_t seed, int32_t* calls) {
  std::mt19937_64 rng(seed);
  constexpr size_t kMaxCount = 4 << 20;  // floats: 16 MiB
  std::vector<float> in(kMaxCount, 1.0f);
  std::vector<float> out(kMaxCount * static_cast<size_t>(nranks));
  for (;;) {
    const size_t count = size_t{1024} << (rng() % 13);
    ncclResult_t r = ncclSuccess;
    switch (rng() % 4) {
      case 0:
        r = ncclAllReduce(in.data(), out.data(), count, ncclFloat32, ncclSum, comm, nullptr);
        break;
      case 1:
        r = ncclBroadcast(in.data(), out.data(), count, ncclFloat32,
                          static_cast<int>(rng() % 4) % nranks, comm, nullptr);
        break;
      case 2:
        r = ncclAllGather(in.data(), out.data(), count / 4, ncclFloat32, comm, nullptr);
        break;
      default:
        r = ncclGroupStart();
        if (r == ncclSuccess) {
          (void)ncclSend(in.data(), count, ncclFloat32, (rank + 1) % nranks, comm, nullptr);
          (void)ncclRecv(out.data(), count, ncclFloat32, (rank - 1 + nranks) % nranks, comm,
                         nullptr);
          r = ncclGroupEnd();
        }
        break;
    }
    if (r != ncclSuccess) return r;
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
