// Running matrix cases (tests/api/matrix_cases.h) on GPU communicators: buffers in device
// memory and calls on streams, through braid's device seam (braid_ext.h), so the same tests run
// on the emulated GPU (BRAID_EMULATE_GPUS, ctest label emulated-gpu) and on a real one (label
// gpu). A rank's regions are copied to its device before the call and back after its stream
// has finished, then checked byte by byte as on the host.
//
// Rank r runs on device r % deviceCount(): with four emulated devices and up to four ranks each
// rank has a GPU of its own, and devicesFor() can pack ranks onto fewer to put several on one
// GPU; on a machine with one GPU every rank shares it.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "api/matrix_cases.h"
#include "braid_ext.h"
#include "nccl.h"
#include "support/emulated_gpus.h"
#include "support/multiprocess.h"

// Exported by braid (and by NVIDIA's library) but declared in no header: reads NCCL_DEBUG again.
extern "C" void ncclResetDebugInitInternal();

namespace braid::testing::gpu {

using matrix::Case;
using matrix::caseName;
using matrix::CaseRun;

inline const braidDeviceApi* deviceApi() { return braidGetDeviceApi(); }

/// How many GPUs this process would see, counted in a child process (support/multiprocess.h's
/// probeInChild) so that this one never touches the GPU runtime: a test that forks its ranks must
/// not have used CUDA before the fork (CUDA duplicates none of its state into a child), and
/// braid refuses every GPU call of a child forked after its parent used the runtime. Counted
/// once per process.
inline int devicesSeen() {
  static const int seen = probeInChild([] { return deviceApi()->deviceCount(); });
  return seen;
}

/// Skips the test unless `n` GPUs (real or emulated, as this binary expects) are there; fails
/// instead where BRAID_EMULATE_GPUS asked for as many (support/emulated_gpus.h): the emulation
/// not coming up is a failure, or every emulated-GPU test would pass by skipping.
#define BRAID_REQUIRE_GPUS(n)                                         \
  do {                                                                \
    const int braidHave = ::braid::testing::gpu::devicesSeen();       \
    if (braidHave < (n)) {                                            \
      if (::braid::testing::emulatedGpusAsked() >= (n)) {             \
        FAIL() << ::braid::testing::emulatedGpusMissing(braidHave);   \
      }                                                               \
      GTEST_SKIP() << "needs " << (n) << " GPU(s), has " << braidHave \
                   << ": a CUDA device, or BRAID_EMULATE_GPUS=<n>";   \
    }                                                                 \
  } while (0)
#define BRAID_REQUIRE_GPU() BRAID_REQUIRE_GPUS(1)

/// The device of each of `nranks` ranks when `perDevice` ranks share one (0: spread them).
inline std::vector<int> devicesFor(int nranks, int perDevice = 0) {
  const int ndev = devicesSeen();
  std::vector<int> devices(nranks);
  for (int r = 0; r < nranks; ++r) devices[r] = (perDevice > 0 ? r / perDevice : r) % ndev;
  return devices;
}

/// GPU communicators of one process (ncclCommInitAll with a device list) and a stream each.
class GpuRanks {
 public:
  explicit GpuRanks(const std::vector<int>& devices) : devices_(devices) {
    const int n = static_cast<int>(devices.size());
    comms_.assign(n, nullptr);
    const ncclResult_t made = ncclCommInitAll(comms_.data(), n, devices.data());
    EXPECT_EQ(made, ncclSuccess) << ncclGetLastError(nullptr);
    if (made != ncclSuccess) {
      comms_.clear();
      return;
    }
    streams_.assign(n, nullptr);
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(deviceApi()->setDevice(devices[r]), ncclSuccess);
      EXPECT_EQ(deviceApi()->streamCreate(&streams_[r]), ncclSuccess) << ncclGetLastError(nullptr);
    }
  }
  ~GpuRanks() {
    for (size_t r = 0; r < comms_.size(); ++r) {
      if (comms_[r] != nullptr) {
        EXPECT_EQ(ncclCommDestroy(comms_[r]), ncclSuccess) << ncclGetLastError(nullptr);
      }
      deviceApi()->setDevice(devices_[r]);
      deviceApi()->streamDestroy(streams_[r]);
    }
  }
  GpuRanks(const GpuRanks&) = delete;
  GpuRanks& operator=(const GpuRanks&) = delete;

  bool ok() const { return !comms_.empty(); }
  int size() const { return static_cast<int>(comms_.size()); }
  ncclComm_t comm(int r) const { return comms_[r]; }
  cudaStream_t stream(int r) const { return streams_[r]; }
  int device(int r) const { return devices_[r]; }
  /// Rank r's communicator was aborted or destroyed by the test: not destroyed again.
  void forget(int r) { comms_[r] = nullptr; }

 private:
  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
};

/// Copies rank r's buffers to its device and makes its operator.
inline ::testing::AssertionResult prepareRank(CaseRun& run, int r, const GpuRanks& g) {
  if (deviceApi()->setDevice(g.device(r)) != ncclSuccess ||
      run.toDevice(r, deviceApi(), g.stream(r)) != ncclSuccess) {
    return ::testing::AssertionFailure()
           << "rank " << r << ": device buffers: " << ncclGetLastError(nullptr);
  }
  if (run.createOp(r, g.comm(r)) != ncclSuccess) {
    return ::testing::AssertionFailure() << "rank " << r << ": " << ncclGetLastError(g.comm(r));
  }
  return ::testing::AssertionSuccess();
}

/// Waits for rank r's call, brings its buffers back, checks them and its communicator's error.
inline void finishRank(CaseRun& run, int r, ncclComm_t comm) {
  EXPECT_EQ(run.fromDevice(r), ncclSuccess) << ncclGetLastError(nullptr);
  ncclResult_t async = ncclInternalError;
  EXPECT_EQ(ncclCommGetAsyncError(comm, &async), ncclSuccess);
  EXPECT_EQ(async, ncclSuccess) << caseName(run.spec()) << ": rank " << r << ": "
                                << ncclGetLastError(comm);
  EXPECT_EQ(run.destroyOp(r, comm), ncclSuccess) << ncclGetLastError(comm);
  EXPECT_TRUE(run.check(r));
}

/// Every rank's call from this thread in one group, which enqueues them all.
inline void runInGroup(CaseRun& run, const GpuRanks& g) {
  const int nr = run.spec().nranks;
  for (int r = 0; r < nr; ++r) ASSERT_TRUE(prepareRank(run, r, g));
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  std::vector<ncclResult_t> results(nr);
  for (int r = 0; r < nr; ++r) results[r] = run.issue(r, g.comm(r));
  const ncclResult_t end = ncclGroupEnd();
  for (int r = 0; r < nr; ++r) {
    EXPECT_EQ(results[r], ncclSuccess)
        << caseName(run.spec()) << ": rank " << r << ": " << ncclGetLastError(g.comm(r));
  }
  ASSERT_EQ(end, ncclSuccess) << caseName(run.spec()) << ": " << ncclGetLastError(nullptr);
  for (int r = 0; r < nr; ++r) finishRank(run, r, g.comm(r));
}

/// One thread per rank, each making its own call.
inline void runOnThreads(CaseRun& run, const GpuRanks& g) {
  const int nr = run.spec().nranks;
  for (int r = 0; r < nr; ++r) ASSERT_TRUE(prepareRank(run, r, g));
  std::vector<ncclResult_t> results(nr, ncclSuccess);
  std::vector<std::string> errors(nr);
  std::vector<std::thread> threads;
  for (int r = 0; r < nr; ++r) {
    threads.emplace_back([&, r] {
      deviceApi()->setDevice(g.device(r));
      results[r] = run.issue(r, g.comm(r));
      if (results[r] != ncclSuccess) errors[r] = ncclGetLastError(g.comm(r));
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < nr; ++r) {
    EXPECT_EQ(results[r], ncclSuccess)
        << caseName(run.spec()) << ": rank " << r << ": " << errors[r];
    finishRank(run, r, g.comm(r));
  }
}

/// From now on this process says what it does at INFO (NCCL_DEBUG=INFO, read again), into a
/// capture of stderr that ::testing::internal::GetCapturedStderr() ends: for a forked rank that
/// checks what its communicator said.
inline void captureInfoLog() {
  setenv("NCCL_DEBUG", "INFO", 1);
  ncclResetDebugInitInternal();
  ::testing::internal::CaptureStderr();
}

/// Runs `cases` on `nranks` forked processes, rank r on devices[r], each a rank of one new GPU
/// communicator checking its own buffers. Stops a rank at its first failure (its peers then
/// end by the communicator's timeout or the parent's). `beforeInit(rank)` runs first in each
/// child (to set its environment), `afterCases(rank)` last, once the communicator is gone. The
/// parent must not have used the GPU runtime: a forked child gets none of its threads.
inline void runCasesInProcesses(int nranks, const std::vector<int>& devices,
                                const std::vector<Case>& cases,
                                const std::function<void(int rank)>& beforeInit = nullptr,
                                const std::function<void(int rank)>& afterCases = nullptr) {
  const uint64_t seed = matrix::testSeed();
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess) << ncclGetLastError(nullptr);
  runProcesses(nranks, [&](int rank) {
    if (beforeInit) beforeInit(rank);
    const braidDeviceApi* api = deviceApi();
    ASSERT_EQ(api->setDevice(devices[rank]), ncclSuccess) << ncclGetLastError(nullptr);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(api->streamCreate(&stream), ncclSuccess) << ncclGetLastError(nullptr);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, nranks, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    int device = -1;
    EXPECT_EQ(ncclCommCuDevice(comm, &device), ncclSuccess);
    EXPECT_EQ(device, devices[rank]);
    for (const Case& c : cases) {
      SCOPED_TRACE(caseName(c) + " rank " + std::to_string(rank));
      CaseRun run(c, seed, rank);
      ASSERT_EQ(run.toDevice(rank, api, stream), ncclSuccess) << ncclGetLastError(nullptr);
      ASSERT_EQ(run.createOp(rank, comm), ncclSuccess) << ncclGetLastError(comm);
      ASSERT_EQ(run.issue(rank, comm), ncclSuccess) << ncclGetLastError(comm);
      finishRank(run, rank, comm);
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
    api->streamDestroy(stream);
    if (afterCases) afterCases(rank);
  });
}

}  // namespace braid::testing::gpu
