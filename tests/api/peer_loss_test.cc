// A rank killed in the middle of a job (src/watch, src/comm/health.cc): 4 host processes run
// collectives until one is killed with SIGKILL at a random moment; every survivor's call must
// return ncclRemoteError naming the killed rank, long before BRAID_TIMEOUT_MS (left at its
// 10-minute default), on one host over shared memory and across "hosts" (BRAID_HOSTID per
// process) over sockets and over the verbs transport on the emulated HCA. 20 trials each.
#include <gtest/gtest.h>

#include <algorithm>
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
  auto of = [](int r) { return static_cast<float>(r + 1); };
  // The buffers grow as the calls reach further, up to 16 MiB in and 16 MiB a rank out. A trial
  // ends within 400 ms, after a few calls, and every page a process first touches is a fault: the
  // 80 MiB each of four ranks once filled up front cost more of a trial's time than its calls.
  std::vector<float> in;
  std::vector<float> out;
  auto reach = [&](size_t inCount, size_t outCount) {
    if (in.size() < inCount) in.resize(inCount, of(rank));
    if (out.size() < outCount) out.resize(outCount);
  };
  for (;;) {
    const size_t count = size_t{1024} << (rng() % 13);  // 4 KiB .. 16 MiB
    // The all-gather's output is nranks blocks of count / 4; the other calls' is count.
    reach(count, std::max(count, count / 4 * static_cast<size_t>(nranks)));
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
