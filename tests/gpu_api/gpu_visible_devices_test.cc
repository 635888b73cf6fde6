// One GPU per process, as torchrun, Slurm and Kubernetes launch jobs: CUDA_VISIBLE_DEVICES gives
// each process one GPU, which it numbers 0. The ranks must still count as on separate GPUs (their
// PCI bus IDs differ): a channel count from the device's multiprocessors, no "ranks share a GPU"
// message. And ranks of several processes that see the same single GPU must be known to share
// it. On the emulated GPU, which honours CUDA_VISIBLE_DEVICES as CUDA does; on a real machine
// with as many GPUs, the same.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gpu_api/gpu_cases.h"

// Exported by braid (and by NVIDIA's library) but declared in no header: reads NCCL_DEBUG again.
extern "C" void ncclResetDebugInitInternal();

namespace gpu_visible_devices_test {

using braid::testing::gpu::CaseRun;
using braid::testing::gpu::deviceApi;
using braid::testing::gpu::finishRank;
using braid::testing::matrix::Case;
using braid::testing::matrix::Coll;
using braid::testing::matrix::Op;

/// What each forked rank saw, in memory its parent reads after it exits.
struct RankView {
  char busId[32];  ///< the bus ID its communicator said it runs on
  int device;      ///< its device number (ncclCommCuDevice)
};

class SharedViews {
 public:
  explicit SharedViews(int n) : n_(n) {
    void* p = mmap(nullptr, n * sizeof(RankView), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    views_ = p == MAP_FAILED ? nullptr : static_cast<RankView*>(p);
    if (views_ != nullptr) memset(views_, 0, n * sizeof(RankView));
  }
  ~SharedViews() {
    if (views_ != nullptr) munmap(views_, n_ * sizeof(RankView));
  }
  RankView* get() const { return views_; }

 private:
  int n_;
  RankView* views_ = nullptr;
};

/// The bus ID in "gpu: rank R on device D (NAME, BUS) with ...", or "".
std::string busIdSaid(const std::string& log) {
  const size_t line = log.find(" on device ");
  if (line == std::string::npos) return "";
  const size_t comma = log.find(", ", line);
  const size_t close = log.find(") with ", line);
  if (comma == std::string::npos || close == std::string::npos || close < comma) return "";
  return log.substr(comma + 2, close - comma - 2);
}

/// Forks `nranks` ranks, rank r seeing only the GPUs `visible[r]` says (CUDA_VISIBLE_DEVICES),
/// each running an all_reduce and checking it; returns what each rank's communicator said at
/// INFO while it was made, and fills `views`.
std::vector<std::string> runSeeing(const std::vector<std::string>& visible, RankView* views) {
  const int nranks = static_cast<int>(visible.size());
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess) << ncclGetLastError(nullptr);
  char dir[] = "/tmp/braid_visible_XXXXXX";
  if (mkdtemp(dir) == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
    return {};
  }
  const Case c{Coll::kAllReduce, ncclFloat32, Op::kSum, 100003, nranks, false, 0};
  const uint64_t seed = braid::testing::matrix::testSeed();
  braid::testing::runProcesses(nranks, [&](int rank) {
    setenv("CUDA_VISIBLE_DEVICES", visible[rank].c_str(), 1);
    setenv("NCCL_DEBUG", "INFO", 1);
    ncclResetDebugInitInternal();
    ::testing::internal::CaptureStderr();
    const braidDeviceApi* api = deviceApi();
    ASSERT_EQ(api->setDevice(0), ncclSuccess) << ncclGetLastError(nullptr);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(api->streamCreate(&stream), ncclSuccess) << ncclGetLastError(nullptr);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, nranks, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    const std::string log = ::testing::internal::GetCapturedStderr();
    const std::string path = std::string(dir) + "/" + std::to_string(rank);
    if (FILE* f = fopen(path.c_str(), "w")) {
      fputs(log.c_str(), f);
      fclose(f);
    }
    snprintf(views[rank].busId, sizeof(views[rank].busId), "%s", busIdSaid(log).c_str());
    EXPECT_EQ(ncclCommCuDevice(comm, &views[rank].device), ncclSuccess);
    CaseRun run(c, seed, rank);
    ASSERT_EQ(run.toDevice(rank, api, stream), ncclSuccess) << ncclGetLastError(nullptr);
    ASSERT_EQ(run.createOp(rank, comm), ncclSuccess) << ncclGetLastError(comm);
    ASSERT_EQ(run.issue(rank, comm), ncclSuccess) << ncclGetLastError(comm);
    finishRank(run, rank, comm);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
    api->streamDestroy(stream);
  });
  std::vector<std::string> logs(nranks);
  for (int r = 0; r < nranks; ++r) {
    const std::string path = std::string(dir) + "/" + std::to_string(r);
    if (FILE* f = fopen(path.c_str(), "r")) {
      char buffer[4096];
      size_t got = 0;
      while ((got = fread(buffer, 1, sizeof(buffer), f)) > 0) logs[r].append(buffer, got);
      fclose(f);
    }
    remove(path.c_str());
  }
  rmdir(dir);
  return logs;
}

class GpuVisibleDevices : public ::testing::Test {
 protected:
  void SetUp() override { BRAID_REQUIRE_GPU(); }
};

TEST_F(GpuVisibleDevices, OneGpuPerProcessIsFourGpus) {
  BRAID_REQUIRE_GPUS(4);
  SharedViews views(4);
  ASSERT_NE(views.get(), nullptr);
  const std::vector<std::string> logs = runSeeing({"0", "1", "2", "3"}, views.get());
  ASSERT_EQ(logs.size(), 4u);
  std::set<std::string> buses;
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(views.get()[r].device, 0) << "each process numbers its one GPU 0";
    EXPECT_FALSE(std::string(views.get()[r].busId).empty()) << logs[r];
    buses.insert(views.get()[r].busId);
    EXPECT_NE(logs[r].find("; 1 rank(s) on this device"), std::string::npos) << logs[r];
    EXPECT_NE(logs[r].find("(one per "), std::string::npos)
        << "channels from the multiprocessors: " << logs[r];
    EXPECT_EQ(logs[r].find("share GPU"), std::string::npos) << logs[r];
  }
  EXPECT_EQ(buses.size(), 4u) << "four processes, four GPUs";
}

TEST_F(GpuVisibleDevices, TwoProcessesSeeingOneGpuShareIt) {
  BRAID_REQUIRE_GPUS(2);
  SharedViews views(2);
  ASSERT_NE(views.get(), nullptr);
  // Both see the machine's second GPU, as their device 0.
  const std::vector<std::string> logs = runSeeing({"1", "1"}, views.get());
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_STREQ(views.get()[0].busId, views.get()[1].busId);
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(views.get()[r].device, 0);
    EXPECT_NE(logs[r].find("; 2 rank(s) on this device"), std::string::npos) << logs[r];
  }
  // Said once per process that shares a GPU with another, unless MPS runs.
  const bool mps =
      access("/tmp/nvidia-mps/control", F_OK) == 0 || getenv("CUDA_MPS_PIPE_DIRECTORY") != nullptr;
  if (!mps) {
    EXPECT_NE(
        (logs[0] + logs[1])
            .find("ranks of 2 processes share GPU 0 (" + std::string(views.get()[0].busId) + ")"),
        std::string::npos)
        << logs[0] << logs[1];
  }
}

}  // namespace gpu_visible_devices_test
