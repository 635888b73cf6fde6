// Hangs explained on GPU communicators (src/flight, tools/doctor): one rank of three skips an
// all-reduce while the others' kernels wait for it. On SIGUSR1 each rank dumps its flight
// recorder, whose waits the kernels' blocks noted in pinned memory, and braid-doctor names the
// skipper. On the emulated GPU in CI (label emulated-gpu); on a real one with label gpu.
#include <gtest/gtest.h>

#include <string>

#include "gpu_api/gpu_cases.h"
#include "nccl.h"
#include "support/hang_scenario.h"

#if defined(__SANITIZE_THREAD__)
#define BRAID_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BRAID_UNDER_TSAN 1
#endif
#endif

namespace {

using braid::testing::gpu::deviceApi;

/// An all-reduce of 1 MiB of device memory, waited for on its stream.
ncclResult_t gpuAllReduce(ncclComm_t comm, int) {
  static void* buffer = nullptr;
  static cudaStream_t stream = nullptr;
  constexpr size_t kCount = 1 << 18;
  if (buffer == nullptr) {
    if (deviceApi()->alloc(&buffer, kCount * sizeof(float)) != ncclSuccess ||
        deviceApi()->streamCreate(&stream) != ncclSuccess) {
      return ncclSystemError;
    }
  }
  const ncclResult_t r = ncclAllReduce(buffer, buffer, kCount, ncclFloat32, ncclSum, comm, stream);
  if (r != ncclSuccess) return r;
  if (deviceApi()->streamSynchronize(stream) != ncclSuccess) return ncclUnhandledCudaError;
  ncclResult_t async = ncclSuccess;
  (void)ncclCommGetAsyncError(comm, &async);
  return async;
}

TEST(GpuFlightRecorder, SigusrDumpsNameTheRankThatSkippedACall) {
  BRAID_REQUIRE_GPU();
#ifdef BRAID_UNDER_TSAN
  // ThreadSanitizer runs a signal's handler only once the thread the signal landed on next calls
  // into its runtime. Here that thread may be an emulated GPU's block spinning on a flag of the
  // skipped call, which does not until the call ends: the dumps come after the test's deadline.
  // (The host communicators' SIGUSR1 test runs under ThreadSanitizer.)
  GTEST_SKIP() << "ThreadSanitizer defers SIGUSR1 past a spinning emulated GPU block";
#endif
  const braid::testing::DumpDir dumps("gpu-flight");
  const std::string& dir = dumps.path();
  ASSERT_FALSE(dir.empty());
  braid::testing::HangScenario s;
  s.init = [](ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank) {
    if (deviceApi()->setDevice(rank % deviceApi()->deviceCount()) != ncclSuccess) {
      return ncclInvalidUsage;
    }
    return ncclCommInitRank(comm, nranks, id, rank);
  };
  s.call = gpuAllReduce;
  const std::string diagnosis = braid::testing::runHangScenario(s, dir, BRAID_DOCTOR_PATH);
  EXPECT_NE(diagnosis.find("verdict: rank 2 is the one the others wait for"), std::string::npos)
      << diagnosis;
  EXPECT_NE(diagnosis.find("has not made call 4"), std::string::npos) << diagnosis;
  const std::string dump = braid::testing::runCommand("cat " + dir + "/braid-flight-*-rank0.txt");
  EXPECT_NE(dump.find("memory: gpu"), std::string::npos) << dump;
  EXPECT_NE(dump.find("call: 4 enqueued AllReduce"), std::string::npos) << dump;
  EXPECT_NE(dump.find("wait: call 4 channel 0 "), std::string::npos) << dump;
}

}  // namespace
