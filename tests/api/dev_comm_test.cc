// dev_comm_test.cc: ncclDevCommCreate's and ncclCommQueryProperties' answers on host
// communicators, through braid's nccl_device.h as a user's program includes it. A host
// communicator has no device API (properties say so, creation refuses it, naming why); every
// requirement braid declines (multimem, GIN, the LL all-to-all, extra resources) is refused by
// name before anything else is looked at; bad arguments get clear errors. The devcomms
// themselves, on the emulated GPU: gpu_api/gpu_dev_comm_test.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"
#include "nccl_device.h"

namespace {

using braid::testing::failsWith;

class HostDevComm : public ::testing::Test {
 protected:
  void SetUp() override {
    comms_.assign(2, nullptr);
    ASSERT_EQ(ncclCommInitAll(comms_.data(), 2, nullptr), ncclSuccess) << ncclGetLastError(nullptr);
  }
  void TearDown() override {
    for (ncclComm_t c : comms_) {
      if (c != nullptr) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
    }
  }
  /// ncclDevCommCreate on rank 0 with `reqs`; the devcomm must stay untouched on failure.
  ncclResult_t create(const ncclDevCommRequirements_t& reqs) {
    memset(&devComm_, 0x5a, sizeof devComm_);
    const ncclResult_t made = ncclDevCommCreate(comms_[0], &reqs, &devComm_);
    if (made != ncclSuccess) {
      ncclDevComm_t untouched;
      memset(&untouched, 0x5a, sizeof untouched);
      EXPECT_EQ(memcmp(&devComm_, &untouched, sizeof untouched), 0) << "a half-made devcomm";
    }
    return made;
  }
  std::vector<ncclComm_t> comms_;
  ncclDevComm_t devComm_;
};

TEST_F(HostDevComm, PropertiesSayAHostCommunicatorHasNoDeviceApi) {
  ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
  ASSERT_EQ(ncclCommQueryProperties(comms_[1], &props), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(props.rank, 1);
  EXPECT_EQ(props.nRanks, 2);
  EXPECT_EQ(props.cudaDev, -1);
  EXPECT_FALSE(props.deviceApiSupport);
  EXPECT_FALSE(props.multimemSupport);
  EXPECT_EQ(props.ginType, NCCL_GIN_TYPE_NONE);
  EXPECT_EQ(props.railedGinType, NCCL_GIN_TYPE_NONE);
  EXPECT_FALSE(props.hostRmaSupport);
  EXPECT_EQ(props.nLsaTeams, 1);
  EXPECT_EQ(props.size, sizeof props);
  EXPECT_EQ(props.magic, static_cast<unsigned>(NCCL_API_MAGIC));
}

TEST_F(HostDevComm, PropertiesOfAnOlderSizeAreWrittenNoFurther) {
  unsigned char bytes[sizeof(ncclCommProperties_t) + 16];
  memset(bytes, 0xee, sizeof bytes);
  ncclCommProperties_t head = NCCL_COMM_PROPERTIES_INITIALIZER;
  head.size = offsetof(ncclCommProperties_t, cudaDev);  // a caller that knew rank and nRanks only
  memcpy(bytes, &head, head.size);
  auto* props = reinterpret_cast<ncclCommProperties_t*>(bytes);
  ASSERT_EQ(ncclCommQueryProperties(comms_[0], props), ncclSuccess);
  EXPECT_EQ(props->nRanks, 2);
  for (size_t i = head.size; i < sizeof bytes; ++i) ASSERT_EQ(bytes[i], 0xee) << "byte " << i;
}

TEST_F(HostDevComm, BadPropertiesAreRefused) {
  ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
  EXPECT_TRUE(failsWith([&] { return ncclCommQueryProperties(comms_[0], nullptr); },
                        ncclInvalidArgument, {"ncclCommQueryProperties", "NULL"}));
  props.magic = 0;
  EXPECT_TRUE(failsWith([&] { return ncclCommQueryProperties(comms_[0], &props); },
                        ncclInvalidArgument, {"NCCL_COMM_PROPERTIES_INITIALIZER"}));
  props = NCCL_COMM_PROPERTIES_INITIALIZER;
  props.size = 4;
  EXPECT_TRUE(failsWith([&] { return ncclCommQueryProperties(comms_[0], &props); },
                        ncclInvalidArgument, {"unexpected size 4"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommQueryProperties(nullptr, &props); },
                        ncclInvalidArgument, {"comm is NULL"}));
}

TEST_F(HostDevComm, AHostCommunicatorGetsNoDevComm) {
  ncclDevCommRequirements_t reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaBarrierCount = 2;
  EXPECT_TRUE(failsWith([&] { return create(reqs); }, ncclInvalidUsage,
                        {"ncclDevCommCreate", "host communicator"}));
}

TEST_F(HostDevComm, EachDeclinedRequirementIsNamed) {
  ncclDevResourceRequirements_t resource{};
  ncclTeamRequirements_t team{};
  const std::vector<std::pair<std::string, std::function<void(ncclDevCommRequirements_t&)>>>
      declined = {
          {"lsaMultimem", [](auto& r) { r.lsaMultimem = true; }},
          {"teamRequirementsList", [&](auto& r) { r.teamRequirementsList = &team; }},
          {"resourceRequirementsList", [&](auto& r) { r.resourceRequirementsList = &resource; }},
          {"barrierCount", [](auto& r) { r.barrierCount = 1; }},
          {"railGinBarrierCount", [](auto& r) { r.railGinBarrierCount = 1; }},
          {"worldGinBarrierCount", [](auto& r) { r.worldGinBarrierCount = 1; }},
          {"ginForceEnable", [](auto& r) { r.ginForceEnable = true; }},
          {"ginSignalCount", [](auto& r) { r.ginSignalCount = 4; }},
          {"ginCounterCount", [](auto& r) { r.ginCounterCount = 4; }},
          {"ginConnectionType", [](auto& r) { r.ginConnectionType = NCCL_GIN_CONNECTION_FULL; }},
          {"lsaLLA2ABlockCount", [](auto& r) { r.lsaLLA2ABlockCount = 1; }},
      };
  for (const auto& [field, ask] : declined) {
    ncclDevCommRequirements_t reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
    ask(reqs);
    EXPECT_TRUE(failsWith([&] { return create(reqs); }, ncclInvalidUsage,
                          {"ncclDevCommCreate: braid declines " + field}))
        << field;
  }
}

TEST_F(HostDevComm, BadRequirementsAreRefused) {
  ncclDevCommRequirements_t reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  EXPECT_TRUE(failsWith([&] { return ncclDevCommCreate(comms_[0], nullptr, &devComm_); },
                        ncclInvalidArgument, {"ncclDevCommCreate", "NULL"}));
  EXPECT_TRUE(failsWith([&] { return ncclDevCommCreate(comms_[0], &reqs, nullptr); },
                        ncclInvalidArgument, {"ncclDevCommCreate", "NULL"}));
  EXPECT_TRUE(failsWith([&] { return ncclDevCommCreate(nullptr, &reqs, &devComm_); },
                        ncclInvalidArgument, {"comm is NULL"}));
  ncclDevCommRequirements_t zeroed;
  memset(&zeroed, 0, sizeof zeroed);  // as a program written for 2.28 fills them
  EXPECT_TRUE(failsWith([&] { return create(zeroed); }, ncclInvalidUsage,
                        {"NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER"}));
  reqs.lsaBarrierCount = -1;
  EXPECT_TRUE(failsWith([&] { return create(reqs); }, ncclInvalidArgument,
                        {"lsaBarrierCount is negative"}));
  reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.size = 8;
  EXPECT_TRUE(failsWith([&] { return create(reqs); }, ncclInvalidArgument, {"unexpected size 8"}));
}

TEST_F(HostDevComm, DestroyRefusesWhatIsNoDevComm) {
  ncclDevComm_t garbage;
  memset(&garbage, 0, sizeof garbage);
  EXPECT_TRUE(failsWith([&] { return ncclDevCommDestroy(comms_[0], &garbage); },
                        ncclInvalidArgument, {"ncclDevCommDestroy", "not a device communicator"}));
  EXPECT_TRUE(failsWith([&] { return ncclDevCommDestroy(comms_[0], nullptr); }, ncclInvalidArgument,
                        {"ncclDevCommDestroy", "NULL"}));
}

}  // namespace
