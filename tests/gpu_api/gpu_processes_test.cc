// GPU communicators whose ranks are processes: the FIFOs cross processes through CUDA IPC
// handles (or the emulated GPU's shared segments), on separate GPUs, several ranks on one GPU
// (which NCCL refuses), and through pinned host memory when BRAID_TRANSPORTS leaves out
// cuda_ipc. Every collective, out of and in place, on counts that fit one slice, need many,
// and end in a partial one.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "gpu_api/gpu_cases.h"

namespace {

using braid::testing::gpu::runCasesInProcesses;
using braid::testing::matrix::Case;
using braid::testing::matrix::Coll;
using braid::testing::matrix::hasInPlace;
using braid::testing::matrix::hasOutOfPlace;
using braid::testing::matrix::Op;
using braid::testing::matrix::reduces;

// Every collective with float32 (sum and avg where it reduces) and bfloat16 prod, at 1, 1000
// and 300007 elements, root (shift) nranks - 1.
std::vector<Case> everyCollective(int nranks) {
  std::vector<Case> cases;
  for (Coll coll : braid::testing::matrix::kAllColls) {
    for (size_t count : {size_t{1}, size_t{1000}, size_t{300007}}) {
      for (bool inPlace : {false, true}) {
        if (inPlace ? !hasInPlace(coll) : !hasOutOfPlace(coll)) continue;
        std::vector<std::pair<ncclDataType_t, Op>> kinds = {{ncclFloat32, Op::kSum}};
        if (reduces(coll)) kinds.push_back({ncclBfloat16, Op::kProd});
        if (reduces(coll)) kinds.push_back({ncclFloat32, Op::kAvg});
        for (auto [type, op] : kinds) {
          cases.push_back({coll, type, op, count, nranks, inPlace, nranks - 1});
        }
      }
    }
  }
  return cases;
}

class GpuProcesses : public ::testing::Test {
 protected:
  void SetUp() override { BRAID_REQUIRE_GPU(); }
  static int devices() { return braid::testing::gpu::devicesSeen(); }
};

TEST_F(GpuProcesses, TwoProcessesOnTwoGpus) {
  BRAID_REQUIRE_GPUS(2);
  runCasesInProcesses(2, {0, 1}, everyCollective(2));
}

TEST_F(GpuProcesses, TwoProcessesOnOneGpu) { runCasesInProcesses(2, {0, 0}, everyCollective(2)); }

TEST_F(GpuProcesses, ThreeProcessesOnThreeGpus) {
  BRAID_REQUIRE_GPUS(3);
  runCasesInProcesses(3, {0, 1, 2}, everyCollective(3));
}

TEST_F(GpuProcesses, FourProcessesTwoPerGpu) {
  const int d1 = devices() > 1 ? 1 : 0;
  runCasesInProcesses(4, {0, 0, d1, d1}, everyCollective(4));
}

TEST_F(GpuProcesses, PinnedHostFifosWithoutCudaIpc) {
  const int d1 = devices() > 1 ? 1 : 0;
  runCasesInProcesses(2, {0, d1}, everyCollective(2),
                      [](int) { setenv("BRAID_TRANSPORTS", "shm", 1); });
}

// CUDA duplicates none of its state into a forked child: a child of a process that used the GPU
// runtime must not use it (multiprocess tests count GPUs in a child of their own for this
// reason). braid refuses such a child's GPU calls, saying why, on the emulated GPU as it would
// on a real one, so that a test or program that forks too late fails here and not on a GPU.
TEST_F(GpuProcesses, AChildForkedAfterTheParentUsedTheGpuIsRefusedSayingWhy) {
  // This process uses the runtime, on purpose, before it forks.
  ASSERT_GT(braid::testing::gpu::deviceApi()->deviceCount(), 0);
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runProcesses(1, [&](int) {
    const braidDeviceApi* api = braid::testing::gpu::deviceApi();
    EXPECT_EQ(api->deviceCount(), 0);
    void* p = nullptr;
    EXPECT_NE(api->alloc(&p, 64), ncclSuccess);
    EXPECT_NE(std::string(ncclGetLastError(nullptr)).find("forked from process"), std::string::npos)
        << ncclGetLastError(nullptr);
    ncclComm_t comm = nullptr;
    EXPECT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclInvalidUsage);
    EXPECT_NE(std::string(ncclGetLastError(nullptr)).find("after that process used the GPU"),
              std::string::npos)
        << ncclGetLastError(nullptr);
    // A host communicator needs no GPU: it is still made.
    EXPECT_EQ(braidCommInitRankHost(&comm, 1, id, 0, nullptr), ncclSuccess)
        << ncclGetLastError(nullptr);
    if (comm != nullptr) EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

TEST_F(GpuProcesses, MixingHostAndGpuRanksIsRefusedByName) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runProcesses(2, [&](int rank) {
    if (rank == 1) setenv("BRAID_HOST_COMM", "1", 1);
    ncclComm_t comm = nullptr;
    const ncclResult_t r = ncclCommInitRank(&comm, 2, id, rank);
    EXPECT_EQ(r, ncclInvalidUsage);
    const std::string text = ncclGetLastError(nullptr);
    EXPECT_NE(text.find("runs on a GPU but rank"), std::string::npos) << text;
    EXPECT_NE(text.find("BRAID_HOST_COMM"), std::string::npos) << text;
  });
}

}  // namespace
