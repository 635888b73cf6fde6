// Peer access asked in the direction data flows: a rank's FIFOs lie in its GPU's memory only when
// the GPU of the rank that writes them reaches that memory. On machines where peer access goes
// one way only, the other way must fall back to pinned host memory. The emulated GPU is told to
// lack peer access from device 1 to device 0 (BRAID_EMULATE_GPU_NO_P2P=1>0): rank 0 (device 0)
// keeps its FIFOs from rank 1 in pinned host memory and says so; rank 1 (device 1), which device
// 0 reaches, keeps them in its GPU's memory; the results are right either way.
//
// Peer access that the GPU claims but that corrupts data (broken P2P on VMs) is found by the
// copy-and-compare check at init (comm/gpu_peer_probe.h): the emulated GPU is told that device
// 0's copies into device 1's memory arrive corrupt (BRAID_EMULATE_GPU_BAD_P2P=0>1); rank 1 warns,
// naming both GPUs, and keeps its FIFOs from rank 0 in pinned host memory; the results are right.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "gpu_api/gpu_cases.h"
#include "support/emulated_gpus.h"

namespace gpu_peer_access_test {

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
  const Case allReduce{Coll::kAllReduce, ncclFloat32, Op::kSum, 100003, 2, false, 0};
  braid::testing::gpu::runCasesInProcesses(
      2, {0, 1}, {allReduce},
      [](int) {
        setenv("BRAID_EMULATE_GPU_NO_P2P", "1>0", 1);
        braid::testing::gpu::captureInfoLog();
      },
      [](int rank) {
        const std::string log = ::testing::internal::GetCapturedStderr();
        if (rank == 0) {
          EXPECT_NE(log.find("the GPU of rank 1 (0000:e1:00.0) cannot reach this GPU's memory"),
                    std::string::npos)
              << log;
        } else {
          EXPECT_EQ(log.find("cannot reach this GPU's memory"), std::string::npos) << log;
        }
        // Peer access that works passes the copy-and-compare check.
        EXPECT_EQ(log.find("corrupted a test copy"), std::string::npos) << log;
      });
}

TEST_F(GpuPeerAccess, PeerAccessThatCorruptsDataIsFoundAtInitAndAvoided) {
  const Case allReduce{Coll::kAllReduce, ncclFloat32, Op::kSum, 100003, 2, false, 0};
  braid::testing::gpu::runCasesInProcesses(
      2, {0, 1}, {allReduce},
      [](int) {
        setenv("BRAID_EMULATE_GPU_BAD_P2P", "0>1", 1);
        braid::testing::gpu::captureInfoLog();
        setenv("NCCL_DEBUG", "TRACE", 1);  // where each FIFO was made is traced
        ncclResetDebugInitInternal();
      },
      [](int rank) {
        const std::string log = ::testing::internal::GetCapturedStderr();
        const std::string warning =
            "peer access from the GPU of rank 0 (0000:e0:00.0) to the GPU of rank 1 "
            "(0000:e1:00.0) corrupted a test copy";
        if (rank == 1) {
          EXPECT_NE(log.find(warning), std::string::npos) << log;
          EXPECT_NE(log.find("FIFO from rank 0 on channel 0 made in pinned host memory"),
                    std::string::npos)
              << log;
        } else {
          EXPECT_EQ(log.find("corrupted a test copy"), std::string::npos) << log;
          EXPECT_NE(log.find("FIFO from rank 1 on channel 0 made in device memory"),
                    std::string::npos)
              << log;
        }
      });
}

}  // namespace gpu_peer_access_test
