// A rank killed in the middle of a job on GPU communicators (the kill trials of
// tests/support/kill_trials.h): 4 processes, one GPU each (rank r on device r % devices), run
// collectives on device buffers and streams until one is killed with SIGKILL. The kernels that
// wait for it must give up (the watcher raises the communicator's abort word), each survivor's
// stream finishes, and ncclCommGetAsyncError reports ncclRemoteError with a text that names the
// killed rank: on one host (GPU FIFOs) and across "hosts" (BRAID_HOSTID, pinned FIFOs over
// sockets). On the emulated GPU in CI (label emulated-gpu); on a real one with label gpu.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "gpu_api/gpu_cases.h"
#include "nccl.h"
#include "support/blocked_stderr.h"
#include "support/kill_trials.h"

namespace {

using braid::testing::KillTrialSetup;
using braid::testing::runKillTrials;
using braid::testing::gpu::deviceApi;

/// All-reduces and broadcasts of 4 KiB to 4 MiB on device memory, each waited for on its stream
/// and followed by ncclCommGetAsyncError, as a training loop's watchdog polls it. Rank r's input
/// is all r + 1; each output is copied back and checked.
ncclResult_t gpuLoop(ncclComm_t comm, int rank, int nranks, uint64_t seed, int32_t* calls) {
  const braidDeviceApi* api = deviceApi();
  constexpr size_t kMaxCount = 1 << 20;  // floats: 4 MiB
  void* in = nullptr;
  void* out = nullptr;
  cudaStream_t stream = nullptr;
  std::vector<float> host(kMaxCount, static_cast<float>(rank + 1));
  if (api->alloc(&in, kMaxCount * sizeof(float)) != ncclSuccess ||
      api->alloc(&out, kMaxCount * sizeof(float)) != ncclSuccess ||
      api->streamCreate(&stream) != ncclSuccess ||
      api->copy(in, host.data(), kMaxCount * sizeof(float), stream) != ncclSuccess) {
    return ncclSystemError;
  }
  std::mt19937_64 rng(seed);
  for (;;) {
    const size_t count = size_t{1024} << (rng() % 11);
    const bool allReduce = rng() % 2 == 0;
    const int root = static_cast<int>(rng() % static_cast<uint64_t>(nranks));
    ncclResult_t r = allReduce ? ncclAllReduce(in, out, count, ncclFloat32, ncclSum, comm, stream)
                               : ncclBroadcast(in, out, count, ncclFloat32, root, comm, stream);
    if (r != ncclSuccess) return r;
    if (api->streamSynchronize(stream) != ncclSuccess) return ncclUnhandledCudaError;
    ncclResult_t async = ncclSuccess;
    if (ncclCommGetAsyncError(comm, &async) != ncclSuccess) return ncclInternalError;
    if (async != ncclSuccess) return async;
    if (api->copy(host.data(), out, count * sizeof(float), stream) != ncclSuccess ||
        api->streamSynchronize(stream) != ncclSuccess) {
      return ncclUnhandledCudaError;
    }
    const float want =
        allReduce ? static_cast<float>(nranks * (nranks + 1) / 2) : static_cast<float>(root + 1);
    if (!braid::testing::outputHolds(host.data(), count, want,
                                     allReduce ? "ncclAllReduce" : "ncclBroadcast", rank)) {
      return ncclInternalError;
    }
    ++*calls;
  }
}

/// Rank r on its own device, where the machine has enough (the emulated GPU has four).
ncclResult_t initOnDevice(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank) {
  if (deviceApi()->setDevice(rank % deviceApi()->deviceCount()) != ncclSuccess) {
    return ncclInvalidUsage;
  }
  return ncclCommInitRank(comm, nranks, id, rank);
}

TEST(GpuKillTrials, OneHost) {
  BRAID_REQUIRE_GPU();
  KillTrialSetup setup;
  setup.seed = 24;
  setup.init = initOnDevice;
  setup.loop = gpuLoop;
  const auto summary = runKillTrials(setup, "4 GPU ranks on one host");
  EXPECT_EQ(summary.hangs, 0);
  EXPECT_EQ(summary.namedTheRank, summary.survivors);
}

TEST(GpuKillTrials, TwoHostsSockets) {
  BRAID_REQUIRE_GPU();
  KillTrialSetup setup;
  setup.seed = 25;
  setup.init = initOnDevice;
  setup.loop = gpuLoop;
  setup.beforeInit = [](int rank) {
    setenv("BRAID_HOSTID", rank < 2 ? "gpu-kill-trials-a" : "gpu-kill-trials-b", 1);
    setenv("BRAID_NET", "Socket", 1);
  };
  const auto summary = runKillTrials(setup, "4 GPU ranks on 2 hosts (sockets)");
  EXPECT_EQ(summary.hangs, 0);
  EXPECT_EQ(summary.namedTheRank, summary.survivors);
}

/// The victim's sockets outlive it (the test process holds copies), as they do while the kernel
/// tears a large or starved process down: its neighbours, on the same kernel, hear of the death
/// through its life line (src/watch/life_line.h) instead. Before the life line, the survivors
/// heard only of its silence, 20 s later (BRAID_HEARTBEAT_TIMEOUT_MS).
TEST(GpuKillTrials, ADeathIsHeardBeforeTheKernelClosesItsSockets) {
  BRAID_REQUIRE_GPU();
  if (!braid::testing::canCopySockets()) {
    GTEST_SKIP() << "this kernel does not let a process copy another's sockets (pidfd_getfd)";
  }
  KillTrialSetup setup;
  setup.trials = 3;
  setup.seed = 28;
  setup.init = initOnDevice;
  setup.loop = gpuLoop;
  setup.keepVictimSocketsOpen = true;
  const auto summary = runKillTrials(setup, "4 GPU ranks, the victim's sockets outliving it");
  EXPECT_EQ(summary.hangs, 0);
  EXPECT_EQ(summary.namedTheRank, summary.survivors);
}

/// Rank 0 is killed, and both its neighbours on the watch's ring (ranks 3 and 1) have a stderr
/// that blocks (support/blocked_stderr.h), as when the reader of a job's log stalls: rank 2 hears
/// of the death only through their word, which must not wait for their log lines. Their stderr
/// drains once rank 2 has returned (it counts its returns, one a trial); had their watchers
/// waited to log first, rank 2 would have heard only of their silence, 20 s later
/// (BRAID_HEARTBEAT_TIMEOUT_MS), naming the wrong rank.
TEST(GpuKillTrials, NeighboursWhoseStderrBlocksStillPassTheWordOn) {
  BRAID_REQUIRE_GPU();
  void* shared = mmap(nullptr, sizeof(std::atomic<int32_t>), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* farSideReturns = new (shared) std::atomic<int32_t>(0);
  KillTrialSetup setup;
  setup.trials = 3;
  setup.seed = 27;
  setup.victim = 0;
  setup.init = initOnDevice;
  setup.beforeInit = [farSideReturns](int rank) {
    if (rank != 1 && rank != 3) return;
    if (!braid::testing::blockStderrUntil(farSideReturns, farSideReturns->load())) _exit(2);
  };
  setup.loop = [farSideReturns](ncclComm_t comm, int rank, int nranks, uint64_t seed,
                                int32_t* calls) {
    const ncclResult_t r = gpuLoop(comm, rank, nranks, seed, calls);
    if (rank == 2) farSideReturns->fetch_add(1);
    return r;
  };
  const auto summary = runKillTrials(setup, "4 GPU ranks, the victim's neighbours' stderr blocked");
  EXPECT_EQ(summary.hangs, 0);
  EXPECT_EQ(summary.namedTheRank, summary.survivors);
  munmap(shared, sizeof(std::atomic<int32_t>));
}

/// The survivors shrink without the killed rank and check an all-reduce on device memory.
bool shrinkOnDevice(ncclComm_t comm, int rank, int nranks, int victim, std::string* why) {
  int exclude[1] = {victim};
  ncclComm_t smaller = nullptr;
  if (ncclCommShrink(comm, exclude, 1, &smaller, nullptr, NCCL_SHRINK_ABORT) != ncclSuccess) {
    *why = "shrink: " + std::string(ncclGetLastError(comm));
    return false;
  }
  const braidDeviceApi* api = deviceApi();
  constexpr size_t kCount = 1 << 14;
  const int newRank = rank < victim ? rank : rank - 1;
  std::vector<float> host(kCount, static_cast<float>(newRank + 1));
  void* buffer = nullptr;
  cudaStream_t stream = nullptr;
  bool ok =
      api->alloc(&buffer, kCount * sizeof(float)) == ncclSuccess &&
      api->streamCreate(&stream) == ncclSuccess &&
      api->copy(buffer, host.data(), kCount * sizeof(float), stream) == ncclSuccess &&
      ncclAllReduce(buffer, buffer, kCount, ncclFloat32, ncclSum, smaller, stream) == ncclSuccess &&
      api->copy(host.data(), buffer, kCount * sizeof(float), stream) == ncclSuccess &&
      api->streamSynchronize(stream) == ncclSuccess;
  if (!ok) *why = "all-reduce on the new communicator: " + std::string(ncclGetLastError(smaller));
  const float expected = static_cast<float>((nranks - 1) * nranks / 2);
  for (size_t i = 0; ok && i < kCount; ++i) {
    if (host[i] != expected) {
      *why = "element " + std::to_string(i) + " is " + std::to_string(host[i]);
      ok = false;
    }
  }
  if (ncclCommDestroy(smaller) != ncclSuccess) ok = false;
  return ok;
}

TEST(GpuKillTrials, SurvivorsShrinkAndCarryOn) {
  BRAID_REQUIRE_GPU();
  KillTrialSetup setup;
  setup.trials = 3;
  setup.seed = 26;
  setup.init = initOnDevice;
  setup.loop = gpuLoop;
  setup.recover = shrinkOnDevice;
  const auto summary = runKillTrials(setup, "shrink after a kill, 4 GPU ranks");
  EXPECT_EQ(summary.hangs, 0);
  EXPECT_EQ(summary.recovered, summary.survivors);
}

}  // namespace
