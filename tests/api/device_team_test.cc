// device_team_test.cc: the host entry points of NVIDIA's device API (nccl_device.h) in braid's
// library. The teams of a communicator of four ranks on this host (ncclCommInitAll): the world,
// the load/store-accessible team (all four: one host), the rail (each rank alone across the one
// host), their rank translations, the LL all-to-all's slot count; and the requirements of extra
// device resources fail with ncclInvalidUsage saying they are not implemented (device
// communicators themselves: dev_comm_test.cc and gpu_api/gpu_dev_comm_test.cc).
//
// The declarations are braid's installed nccl_device.h (NCCL's device API headers).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"
#include "nccl_device.h"

// Exported by braid (and by NVIDIA's library) but declared in no header: reads NCCL_DEBUG again.
extern "C" void ncclResetDebugInitInternal();

namespace {

using braid::testing::failsWith;

class DeviceTeams : public ::testing::Test {
 protected:
  static constexpr int kRanks = 4;
  void SetUp() override {
    comms_.assign(kRanks, nullptr);
    ASSERT_EQ(ncclCommInitAll(comms_.data(), kRanks, nullptr), ncclSuccess)
        << ncclGetLastError(nullptr);
  }
  void TearDown() override {
    for (ncclComm_t c : comms_) {
      if (c != nullptr) {
        EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
      }
    }
  }
  std::vector<ncclComm_t> comms_;
};

void expectTeam(ncclTeam t, int nRanks, int rank, int stride) {
  EXPECT_EQ(t.nRanks, nRanks);
  EXPECT_EQ(t.rank, rank);
  EXPECT_EQ(t.stride, stride);
}

TEST_F(DeviceTeams, WorldLsaAndRailOfOneHost) {
  for (int r = 0; r < kRanks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    expectTeam(ncclTeamWorld(comms_[r]), kRanks, r, 1);
    expectTeam(ncclTeamLsa(comms_[r]), kRanks, r, 1);
    expectTeam(ncclTeamRail(comms_[r]), 1, 0, kRanks);
  }
}

TEST_F(DeviceTeams, RanksTranslateBetweenTeams) {
  for (int r = 0; r < kRanks; ++r) {
    const ncclTeam lsa = ncclTeamLsa(comms_[r]);
    const ncclTeam world = ncclTeamWorld(comms_[r]);
    const ncclTeam rail = ncclTeamRail(comms_[r]);
    for (int k = 0; k < kRanks; ++k) {
      EXPECT_EQ(ncclTeamRankToWorld(comms_[r], lsa, k), k);
      EXPECT_EQ(ncclTeamRankToLsa(comms_[r], world, k), k);
    }
    EXPECT_EQ(ncclTeamRankToWorld(comms_[r], rail, 0), r);
    EXPECT_EQ(ncclTeamRankToWorld(comms_[r], world, kRanks), -1);
    EXPECT_EQ(ncclTeamRankToLsa(comms_[r], world, -1), -1);
  }
}

TEST_F(DeviceTeams, AHandleThatIsNoCommunicatorGetsALoneTeam) {
  expectTeam(ncclTeamWorld(nullptr), 1, 0, 1);
  EXPECT_EQ(ncclTeamRankToWorld(nullptr, ncclTeamWorld(comms_[0]), 0), -1);
}

TEST(DeviceApi, LlAllToAllSlotsAreEightByteUnitsPerElement) {
  EXPECT_EQ(ncclLLA2ACalcSlots(32, 16), 64);
  EXPECT_EQ(ncclLLA2ACalcSlots(10, 1), 10);
  EXPECT_EQ(ncclLLA2ACalcSlots(3, 9), 6);
}

TEST_F(DeviceTeams, ExtraDeviceResourcesSayTheyAreNotImplemented) {
  ncclDevResourceRequirements_t req{};
  ncclLsaBarrierHandle_t lsaHandle{};
  ncclGinBarrierHandle_t ginHandle{};
  ncclLLA2AHandle_t a2aHandle{};
  const ncclTeam lsa = ncclTeamLsa(comms_[0]);
  const std::vector<std::pair<const char*, std::function<ncclResult_t()>>> calls = {
      {"ncclLsaBarrierCreateRequirement",
       [&] { return ncclLsaBarrierCreateRequirement(lsa, 1, &lsaHandle, &req); }},
      {"ncclGinBarrierCreateRequirement",
       [&] { return ncclGinBarrierCreateRequirement(comms_[0], lsa, 1, &ginHandle, &req); }},
      {"ncclLLA2ACreateRequirement",
       [&] { return ncclLLA2ACreateRequirement(1, 64, &a2aHandle, &req); }},
  };
  for (const auto& [name, call] : calls) {
    EXPECT_TRUE(failsWith(call, ncclInvalidUsage, {name, "not implemented"})) << name;
  }
}

TEST(DeviceApi, ResettingTheDebugSettingsReadsThemAgain) {
  std::string log;
  {
    braid::testing::ScopedEnv debug("NCCL_DEBUG", "INFO");
    ncclResetDebugInitInternal();
    ncclComm_t comm = nullptr;
    testing::internal::CaptureStderr();
    const ncclResult_t made = ncclCommInitAll(&comm, 1, nullptr);
    if (made == ncclSuccess) {
      EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
    }
    log = testing::internal::GetCapturedStderr();
    EXPECT_EQ(made, ncclSuccess);
  }
  ncclResetDebugInitInternal();  // back to the environment's level for the tests after this one
  EXPECT_NE(log.find("INFO"), std::string::npos) << log;
}

}  // namespace
