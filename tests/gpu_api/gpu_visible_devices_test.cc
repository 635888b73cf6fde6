// One GPU per process, as torchrun, Slurm and Kubernetes launch jobs: CUDA_VISIBLE_DEVICES gives
// each process one GPU, which it numbers 0. The ranks must still count as on separate GPUs (their
// PCI bus IDs differ): a channel count from the device's multiprocessors, no "ranks share a GPU"
// message. And ranks of several processes that see the same single GPU must be known to share
// it. On the emulated GPU, which honours CUDA_VISIBLE_DEVICES as CUDA does; on a real machine
// with as many GPUs, the same.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "gpu_api/gpu_cases.h"

namespace gpu_visible_devices_test {

using braid::testing::matrix::Case;
using braid::testing::matrix::Coll;
using braid::testing::matrix::Op;

/// Each forked rank's GPU bus ID as its communicator said it, in memory its parent reads after.
class SharedBusIds {
 public:
  explicit SharedBusIds(int n) : n_(n) {
    void* p = mmap(nullptr, n * kBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ids_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
    if (ids_ != nullptr) memset(ids_, 0, n * kBytes);
  }
  ~SharedBusIds() {
    if (ids_ != nullptr) munmap(ids_, n_ * kBytes);
  }
  bool ok() const { return ids_ != nullptr; }
  void set(int rank, const std::string& id) {
    snprintf(ids_ + rank * kBytes, kBytes, "%s", id.c_str());
  }
  std::string get(int rank) const { return ids_ + rank * kBytes; }

 private:
  static constexpr size_t kBytes = 32;
  int n_;
  char* ids_ = nullptr;
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

/// Forks one rank per entry of `visible`, rank r seeing only the GPUs visible[r] names
/// (CUDA_VISIBLE_DEVICES) as device 0, each running a checked all_reduce; `check(rank, log)`
/// then reads what the rank's communicator said at INFO, and `buses` keeps its GPU's bus ID.
void runSeeing(const std::vector<std::string>& visible, SharedBusIds& buses,
               const std::function<void(int rank, const std::string& log)>& check) {
  const int nranks = static_cast<int>(visible.size());
  const Case allReduce{Coll::kAllReduce, ncclFloat32, Op::kSum, 100003, nranks, false, 0};
  braid::testing::gpu::runCasesInProcesses(
      nranks, std::vector<int>(nranks, 0), {allReduce},
      [&](int rank) {
        setenv("CUDA_VISIBLE_DEVICES", visible[rank].c_str(), 1);
        braid::testing::gpu::captureInfoLog();
      },
      [&](int rank) {
        const std::string log = ::testing::internal::GetCapturedStderr();
        buses.set(rank, busIdSaid(log));
        check(rank, log);
      });
}

class GpuVisibleDevices : public ::testing::Test {
 protected:
  void SetUp() override { BRAID_REQUIRE_GPU(); }
};

TEST_F(GpuVisibleDevices, OneGpuPerProcessIsFourGpus) {
  BRAID_REQUIRE_GPUS(4);
  SharedBusIds buses(4);
  ASSERT_TRUE(buses.ok());
  // Each process numbers its one GPU 0 (runCasesInProcesses checks ncclCommCuDevice).
  runSeeing({"0", "1", "2", "3"}, buses, [](int, const std::string& log) {
    EXPECT_NE(log.find("; 1 rank(s) on this device"), std::string::npos) << log;
    EXPECT_NE(log.find("(one per "), std::string::npos)
        << "channels from the multiprocessors: " << log;
    EXPECT_EQ(log.find("share GPU"), std::string::npos) << log;
  });
  std::set<std::string> distinct;
  for (int r = 0; r < 4; ++r) {
    EXPECT_FALSE(buses.get(r).empty()) << "rank " << r;
    distinct.insert(buses.get(r));
  }
  EXPECT_EQ(distinct.size(), 4u) << "four processes, four GPUs";
}

TEST_F(GpuVisibleDevices, TwoProcessesSeeingOneGpuShareIt) {
  BRAID_REQUIRE_GPUS(2);
  SharedBusIds buses(2);
  ASSERT_TRUE(buses.ok());
  // Said once per process that shares a GPU with another, unless MPS runs.
  const bool mps =
      access("/tmp/nvidia-mps/control", F_OK) == 0 || getenv("CUDA_MPS_PIPE_DIRECTORY") != nullptr;
  // Both see the machine's second GPU, as their device 0.
  runSeeing({"1", "1"}, buses, [mps](int, const std::string& log) {
    EXPECT_NE(log.find("; 2 rank(s) on this device"), std::string::npos) << log;
    if (!mps) {
      EXPECT_NE(log.find("ranks of 2 processes share GPU 0 (" + busIdSaid(log) + ")"),
                std::string::npos)
          << log;
    }
  });
  EXPECT_FALSE(buses.get(0).empty());
  EXPECT_EQ(buses.get(0), buses.get(1));
}

}  // namespace gpu_visible_devices_test
