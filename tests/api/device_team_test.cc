// device_team_test.cc: the host entry points of NVIDIA's device API (nccl_device.h) in braid's
// library. The teams of a communicator of four ranks on this host (ncclCommInitAll): the world,
// the load/store-accessible team (all four: one host), the rail (each rank alone across the one
// host), their rank translations, the LL all-to-all's slot count; and the entry points that need
// device communicators fail with ncclInvalidUsage saying they are not implemented.
//
// The declarations are NVIDIA's (nccl_device/core.h and its neighbours), repeated here because
// braid's nccl.h, like NVIDIA's, does not declare them: a team is three ints returned by value.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"

extern "C" {
struct ncclTeam {
  int nRanks, rank, stride;
};
ncclTeam ncclTeamWorld(ncclComm_t comm);
ncclTeam ncclTeamLsa(ncclComm_t comm);
ncclTeam ncclTeamRail(ncclComm_t comm);
int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam team, int rank);
int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam team, int rank);
int ncclLLA2ACalcSlots(int maxElts, int maxEltSize);
ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void* reqs, void* outDevComm);
ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const void* devComm);
ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam team, int nBarriers, void* outHandle,
                                             void* outReq);
ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam team, int nBarriers,
                                             void* outHandle, void* outReq);
ncclResult_t ncclLLA2ACreateRequirement(int nBlocks, int nSlots, void* outHandle, void* outReq);
void ncclResetDebugInitInternal();
}

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

TEST_F(DeviceTeams, WhatNeedsDeviceCommunicatorsSaysItIsNotImplemented) {
  char scratch[256] = {};
  const ncclTeam lsa = ncclTeamLsa(comms_[0]);
  const std::vector<std::pair<const char*, std::function<ncclResult_t()>>> calls = {
      {"ncclDevCommCreate", [&] { return ncclDevCommCreate(comms_[0], scratch, scratch); }},
      {"ncclDevCommDestroy", [&] { return ncclDevCommDestroy(comms_[0], scratch); }},
      {"ncclLsaBarrierCreateRequirement",
       [&] { return ncclLsaBarrierCreateRequirement(lsa, 1, scratch, scratch); }},
      {"ncclGinBarrierCreateRequirement",
       [&] { return ncclGinBarrierCreateRequirement(comms_[0], lsa, 1, scratch, scratch); }},
      {"ncclLLA2ACreateRequirement",
       [&] { return ncclLLA2ACreateRequirement(1, 64, scratch, scratch); }},
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
