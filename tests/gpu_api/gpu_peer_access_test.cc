// Peer access asked in the direction data flows: a rank's FIFOs lie in its GPU's memory only when
// the GPU of the rank that writes them reaches that memory. On machines where peer access goes
// one way only, the other way must fall back to pinned host memory. The emulated GPU is told to
// lack peer access from device 1 to device 0 (BRAID_EMULATE_GPU_NO_P2P=1>0): rank 0 (device 0)
// keeps its FIFOs from rank 1 in pinned host memory and says so; rank 1 (device 1), which device
// 0 reaches, keeps them in its GPU's memory; the results are right either way.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gpu_api/gpu_cases.h"
#include "support/emulated_gpus.h"

// Exported by braid (and by NVIDIA's library) but declared in no header: reads NCCL_DEBUG again.
extern "C" void ncclResetDebugInitInternal();

namespace gpu_peer_access_test {

using braid::testing::gpu::CaseRun;
using braid::testing::gpu::deviceApi;
using braid::testing::gpu::finishRank;
using braid::testing::matrix::Case;
using braid::testing::matrix::Coll;
using braid::testing::matrix::Op;

class GpuPeerAccess : public ::testing::Test {
 protected:
  void SetUp() override {
    if (braid::testing::emulatedGpusAsked() < 2) {
      GTEST_SKIP() << "needs the emulated GPU (BRAID_EMULATE_GPUS >= 2), which can be told to "
                      "lack peer access";
    }
    BRAID_REQUIRE_GPUS(2);
  }
};

TEST_F(GpuPeerAccess, OneWayPeerAccessPutsTheOtherWaysFifosInHostMemory) {
  const int n = 2;
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  const Case c{Coll::kAllReduce, ncclFloat32, Op::kSum, 100003, n, false, 0};
  const uint64_t seed = braid::testing::matrix::testSeed();
  braid::testing::runProcesses(n, [&](int rank) {
    setenv("BRAID_EMULATE_GPU_NO_P2P", "1>0", 1);
    setenv("NCCL_DEBUG", "INFO", 1);
    ncclResetDebugInitInternal();
    ::testing::internal::CaptureStderr();
    const braidDeviceApi* api = deviceApi();
    ASSERT_EQ(api->setDevice(rank), ncclSuccess) << ncclGetLastError(nullptr);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(api->streamCreate(&stream), ncclSuccess);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, n, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    CaseRun run(c, seed, rank);
    ASSERT_EQ(run.toDevice(rank, api, stream), ncclSuccess) << ncclGetLastError(nullptr);
    ASSERT_EQ(run.createOp(rank, comm), ncclSuccess) << ncclGetLastError(comm);
    ASSERT_EQ(run.issue(rank, comm), ncclSuccess) << ncclGetLastError(comm);
    finishRank(run, rank, comm);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
    api->streamDestroy(stream);
    const std::string log = ::testing::internal::GetCapturedStderr();
    const std::string said = "the GPU of rank 1 (0000:e1:00.0) cannot reach this GPU's memory";
    if (rank == 0) {
      EXPECT_NE(log.find(said), std::string::npos) << log;
    } else {
      EXPECT_EQ(log.find("cannot reach this GPU's memory"), std::string::npos) << log;
    }
  });
}

}  // namespace gpu_peer_access_test
