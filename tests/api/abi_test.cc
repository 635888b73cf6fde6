// abi_test.cc: braid's nccl.h against NVIDIA's NCCL ABI: 2.32.3's, which braid implements, and
// 2.28.9's, whose header is installed here.
//
// A program compiled against NVIDIA's nccl.h must run against braid's libnccl.so.2 and the
// other way round, so every constant, enum value, struct layout, initializer value and function
// type has to agree. The facts 2.28.9 and 2.32.3 share are listed once in abi_facts.h and
// evaluated three times: here through braid's header in C++, in c_compile_check.c through
// braid's header in C, and in upstream_abi_facts.cc through NVIDIA's 2.28.9 header when it is
// installed (else those tests skip). The static_asserts and the golden values below hold 2.30.7's
// facts (from its nccl.h.in, tag v2.30.7-1), 2.31.2's and 2.32.3's (from the sources
// nccl_2_32_3_functions.txt names) and those that matter most even where NVIDIA's header is
// absent.
#include <gtest/gtest.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "api/abi_facts.h"
#include "nccl.h"

BRAID_ABI_DEFINE_FACTS_GETTER(braidFacts)

namespace {

// --- Facts that hold without any reference header (x86-64 / aarch64 Linux, LP64). ---

static_assert(NCCL_VERSION_CODE == 23203);
static_assert(NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH) == NCCL_VERSION_CODE);
static_assert(NCCL_VERSION(2, 8, 4) == 2804, "releases up to 2.8 use the old encoding");
static_assert(sizeof(ncclUniqueId) == 128);
static_assert(std::is_same_v<cudaStream_t, CUstream_st*>);
static_assert(std::is_same_v<ncclComm_t, ncclComm*>);
static_assert(std::is_same_v<ncclConfig_t, ncclConfig_v23100>);
static_assert(std::is_same_v<ncclCollConfig_t, ncclCollConfig_v23200>);
static_assert(std::is_same_v<cudaEvent_t, CUevent_st*>);
static_assert(std::is_same_v<ncclSimInfo_t, ncclSimInfo_v22200>);
static_assert(sizeof(ncclRedOp_t) == 4 && sizeof(ncclDataType_t) == 4);
static_assert(sizeof(ncclResult_t) == 4 && sizeof(ncclScalarResidence_t) == 4);
static_assert(ncclMaxRedOp == 0x7fffffff);
static_assert(std::is_same_v<decltype(ncclConfig_t::netName), const char*>);
static_assert(std::is_same_v<decltype(ncclConfig_t::size), size_t>);
static_assert(std::is_same_v<decltype(ncclSimInfo_t::estimatedTime), float>);
static_assert(
    std::is_same_v<decltype(ncclAllReduce), ncclResult_t(const void*, void*, size_t, ncclDataType_t,
                                                         ncclRedOp_t, ncclComm_t, cudaStream_t)>);
static_assert(std::is_same_v<decltype(ncclAllReduce), decltype(pncclAllReduce)>);
// 2.30's additions, as its nccl.h.in declares them.
static_assert(
    std::is_same_v<decltype(ncclCommGrow), ncclResult_t(ncclComm_t, int, const ncclUniqueId*, int,
                                                        ncclComm_t*, ncclConfig_t*)>);
static_assert(
    std::is_same_v<decltype(ncclCommGetUniqueId), ncclResult_t(ncclComm_t, ncclUniqueId*)>);
static_assert(std::is_same_v<decltype(ncclCommSuspend), ncclResult_t(ncclComm_t, int)>);
static_assert(std::is_same_v<decltype(ncclCommResume), ncclResult_t(ncclComm_t)>);
static_assert(std::is_same_v<decltype(ncclCommMemStats),
                             ncclResult_t(ncclComm_t, ncclCommMemStat_t, uint64_t*)>);
static_assert(
    std::is_same_v<decltype(ncclWinGetUserPtr), ncclResult_t(ncclComm_t, ncclWindow_t, void**)>);
static_assert(
    std::is_same_v<decltype(ncclPutSignal),
                   ncclResult_t(const void*, size_t, ncclDataType_t, int, ncclWindow_t, size_t, int,
                                int, unsigned int, ncclComm_t, cudaStream_t)>);
static_assert(std::is_same_v<decltype(ncclSignal),
                             ncclResult_t(int, int, int, unsigned int, ncclComm_t, cudaStream_t)>);
static_assert(std::is_same_v<decltype(ncclWaitSignal),
                             ncclResult_t(int, ncclWaitSignalDesc_t*, ncclComm_t, cudaStream_t)>);
static_assert(sizeof(ncclWaitSignalDesc_t) == 16);
static_assert(
    std::is_same_v<decltype(ncclParamBind), ncclResult_t(ncclParamHandle_t*, const char*)>);
static_assert(
    std::is_same_v<decltype(ncclParamGetU16), ncclResult_t(ncclParamHandle_t, uint16_t*)>);
static_assert(
    std::is_same_v<decltype(ncclParamGet), ncclResult_t(ncclParamHandle_t, void*, int, int*)>);
static_assert(
    std::is_same_v<decltype(ncclParamGetAllParameterKeys), ncclResult_t(const char***, int*)>);
static_assert(std::is_same_v<decltype(ncclParamDumpAll), void()>);
// 2.31's per-collective forms: the plain collective's parameters, then the config.
static_assert(std::is_same_v<decltype(ncclAllReduceConfig),
                             ncclResult_t(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                                          ncclComm_t, cudaStream_t, const ncclCollConfig_t*)>);
static_assert(std::is_same_v<decltype(ncclBroadcastConfig),
                             ncclResult_t(const void*, void*, size_t, ncclDataType_t, int,
                                          ncclComm_t, cudaStream_t, const ncclCollConfig_t*)>);
static_assert(std::is_same_v<decltype(ncclReduceConfig),
                             ncclResult_t(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                                          int, ncclComm_t, cudaStream_t, const ncclCollConfig_t*)>);
static_assert(std::is_same_v<decltype(ncclAllGatherConfig),
                             ncclResult_t(const void*, void*, size_t, ncclDataType_t, ncclComm_t,
                                          cudaStream_t, const ncclCollConfig_t*)>);
static_assert(std::is_same_v<decltype(ncclReduceScatterConfig),
                             ncclResult_t(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                                          ncclComm_t, cudaStream_t, const ncclCollConfig_t*)>);
static_assert(std::is_same_v<decltype(ncclAlltoAllConfig), decltype(ncclAllGatherConfig)>);
static_assert(std::is_same_v<decltype(ncclGatherConfig), decltype(ncclBroadcastConfig)>);
static_assert(std::is_same_v<decltype(ncclScatterConfig), decltype(ncclBroadcastConfig)>);
static_assert(std::is_same_v<decltype(pncclScatterConfig), decltype(ncclScatterConfig)>);
static_assert(sizeof(ncclHostCftMode_t) == 4 && sizeof(ncclNvlsHostMode_t) == 4);

size_t indexOf(const std::vector<std::string>& names, const std::string& name) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return i;
  }
  ADD_FAILURE() << "no ABI fact named " << name;
  return 0;
}

TEST(NcclAbiTest, LayoutOfConfigMatchesLp64Golden) {
  struct Field {
    const char* name;
    size_t offset;
    size_t expected;
  };
#define BRAID_FIELD(member, expected) \
  { #member, offsetof(ncclConfig_t, member), expected }
  const Field fields[] = {
      BRAID_FIELD(size, 0),
      BRAID_FIELD(magic, 8),
      BRAID_FIELD(version, 12),
      BRAID_FIELD(blocking, 16),
      BRAID_FIELD(cgaClusterSize, 20),
      BRAID_FIELD(minCTAs, 24),
      BRAID_FIELD(maxCTAs, 28),
      BRAID_FIELD(netName, 32),
      BRAID_FIELD(splitShare, 40),
      BRAID_FIELD(trafficClass, 44),
      BRAID_FIELD(commName, 48),
      BRAID_FIELD(collnetEnable, 56),
      BRAID_FIELD(CTAPolicy, 60),
      BRAID_FIELD(shrinkShare, 64),
      BRAID_FIELD(nvlsCTAs, 68),
      BRAID_FIELD(nChannelsPerNetPeer, 72),
      BRAID_FIELD(nvlinkCentricSched, 76),
      // 2.30
      BRAID_FIELD(graphUsageMode, 80),
      BRAID_FIELD(numRmaCtx, 84),
      BRAID_FIELD(maxP2pPeers, 88),
      BRAID_FIELD(graphStreamOrdering, 92),
      // 2.31
      BRAID_FIELD(launchOrderImplicit, 96),
      BRAID_FIELD(numRmaSig, 100),
      BRAID_FIELD(rmaEagerInit, 104),
      BRAID_FIELD(hostCftMode, 108),
      // 2.32
      BRAID_FIELD(nvlsHostMode, 112),
  };
#undef BRAID_FIELD
  for (const Field& field : fields) EXPECT_EQ(field.offset, field.expected) << field.name;
  EXPECT_EQ(sizeof(ncclConfig_t), 120u);
  EXPECT_EQ(sizeof(ncclSimInfo_t), 24u);
  EXPECT_EQ(offsetof(ncclSimInfo_t, estimatedTime), 16u);
}

// ncclCollConfig_t: 2.31's 64 bytes, then 2.32's event (72); ncclConfigExt_t's 24.
TEST(NcclAbiTest, LayoutOfCollConfigMatchesLp64Golden) {
  EXPECT_EQ(offsetof(ncclCollConfig_t, ext), 16u);
  EXPECT_EQ(offsetof(ncclCollConfig_t, minCTAs), 24u);
  EXPECT_EQ(offsetof(ncclCollConfig_t, maxCTAs), 28u);
  EXPECT_EQ(offsetof(ncclCollConfig_t, nvlsCTAs), 32u);
  EXPECT_EQ(offsetof(ncclCollConfig_t, cgaClusterSize), 36u);
  EXPECT_EQ(offsetof(ncclCollConfig_t, algSelection), 40u);
  EXPECT_EQ(offsetof(ncclCollConfig_t, forceAlgSelection), 48u);
  EXPECT_EQ(offsetof(ncclCollConfig_t, CTAPolicy), 52u);
  EXPECT_EQ(offsetof(ncclCollConfig_t, userProfilerTag), 56u);
  EXPECT_EQ(offsetof(ncclCollConfig_t, launchCompletionEvent), 64u);
  EXPECT_EQ(sizeof(ncclCollConfig_t), 72u);
  EXPECT_EQ(offsetof(ncclConfigExt_t, key.vendorId), 8u);
  EXPECT_EQ(offsetof(ncclConfigExt_t, key.optionId), 12u);
  EXPECT_EQ(offsetof(ncclConfigExt_t, val), 16u);
  EXPECT_EQ(sizeof(ncclConfigExt_t), 24u);
}

TEST(NcclAbiTest, InitializersMatchGolden) {
  const ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  EXPECT_EQ(config.size, sizeof(ncclConfig_t));
  EXPECT_EQ(config.magic, 0xcafebeefu);
  EXPECT_EQ(config.version, 23203u);
  EXPECT_EQ(config.blocking, INT_MIN);
  EXPECT_EQ(config.netName, nullptr);
  EXPECT_EQ(config.commName, nullptr);
  EXPECT_EQ(config.nvlinkCentricSched, INT_MIN);
  EXPECT_EQ(config.graphUsageMode, INT_MIN);
  EXPECT_EQ(config.numRmaCtx, INT_MIN);
  EXPECT_EQ(config.maxP2pPeers, INT_MIN);
  EXPECT_EQ(config.graphStreamOrdering, INT_MIN);
  EXPECT_EQ(config.launchOrderImplicit, INT_MIN);
  EXPECT_EQ(config.numRmaSig, INT_MIN);
  EXPECT_EQ(config.rmaEagerInit, INT_MIN);
  EXPECT_EQ(config.hostCftMode, INT_MIN);
  EXPECT_EQ(config.nvlsHostMode, INT_MIN);

  const ncclCollConfig_t coll = NCCL_COLLCONFIG_INITIALIZER;
  EXPECT_EQ(coll.size, sizeof(ncclCollConfig_t));
  EXPECT_EQ(coll.magic, 0xcafebeefu);
  EXPECT_EQ(coll.version, 23203u);
  EXPECT_EQ(coll.ext, nullptr);
  EXPECT_EQ(coll.minCTAs, INT_MIN);
  EXPECT_EQ(coll.maxCTAs, INT_MIN);
  EXPECT_EQ(coll.nvlsCTAs, INT_MIN);
  EXPECT_EQ(coll.cgaClusterSize, INT_MIN);
  EXPECT_EQ(coll.algSelection, nullptr);
  EXPECT_EQ(coll.forceAlgSelection, 1);
  EXPECT_EQ(coll.CTAPolicy, INT_MIN);
  EXPECT_EQ(coll.userProfilerTag, 0u);
  EXPECT_EQ(coll.launchCompletionEvent, nullptr);

  const ncclSimInfo_t simInfo = NCCL_SIM_INFO_INITIALIZER;
  EXPECT_EQ(simInfo.size, sizeof(ncclSimInfo_t));
  EXPECT_EQ(simInfo.magic, 0x74685283u);
  EXPECT_EQ(simInfo.version, 23203u);
  EXPECT_EQ(simInfo.estimatedTime, -1.0f);
}

TEST(NcclAbiTest, EnumValuesMatchGolden) {
  EXPECT_EQ(ncclSuccess, 0);
  EXPECT_EQ(ncclRemoteError, 6);
  EXPECT_EQ(ncclInProgress, 7);
  EXPECT_EQ(ncclTimeout, 8);
  EXPECT_EQ(ncclNumResults, 9);
  EXPECT_EQ(ncclStatGpuMemSuspend, 0);
  EXPECT_EQ(ncclStatGpuMemTotal, 3);
  EXPECT_EQ(NCCL_SUSPEND_MEM, 1);
  EXPECT_EQ(NCCL_WIN_STRICT_ORDERING, 2);
  EXPECT_EQ(NCCL_WIN_GIN_ONLY, 4);
  EXPECT_EQ(NCCL_WIN_CFT_COUNTED, 8);
  EXPECT_EQ(ncclHostCftDefault, INT_MIN);
  EXPECT_EQ(ncclHostCftEnable, 1);
  EXPECT_EQ(ncclHostCftDisable, 2);
  EXPECT_EQ(ncclHostCftFallback, 3);
  EXPECT_EQ(ncclNvlsHostModeDefault, INT_MIN);
  EXPECT_EQ(ncclNvlsHostModeEnable, 0);
  EXPECT_EQ(ncclNvlsHostModeDisableTransport, 1);
  EXPECT_EQ(ncclNvlsHostModeDisableSymmetricMultimem, 2);
  EXPECT_EQ(ncclNvlsHostModeDisable, INT_MAX);
  EXPECT_EQ(NCCL_API_MAGIC, 0xcafebeefu);
  EXPECT_EQ(ncclAvg, 4);
  EXPECT_EQ(ncclNumOps, 5);
  EXPECT_EQ(ncclChar, ncclInt8);
  EXPECT_EQ(ncclInt, ncclInt32);
  EXPECT_EQ(ncclHalf, 6);
  EXPECT_EQ(ncclFloat, 7);
  EXPECT_EQ(ncclDouble, 8);
  EXPECT_EQ(ncclBfloat16, 9);
  EXPECT_EQ(ncclFloat8e5m2, 11);
  EXPECT_EQ(ncclNumTypes, 12);
  EXPECT_EQ(ncclScalarHostImmediate, 1);
}

// --- The C view of braid's header. ---

TEST(NcclAbiTest, CSeesTheSameAbiAsCxx) {
  const braid::test::AbiFacts ours = braidFacts();
  std::vector<long long> fromC(kBraidAbiNumberCount);
  braidCAbiNumbers(fromC.data());
  const std::vector<std::string> names = braid::test::abiNumberNames();
  ASSERT_EQ(names.size(), ours.numbers.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(fromC[i], ours.numbers[i]) << names[i];
  }
}

// --- Against NVIDIA's header. ---

class UpstreamAbiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!braidUpstreamAbiFacts(&upstream_)) {
      GTEST_SKIP() << "NVIDIA's nccl.h 2.28.9 (/usr/local/cuda/include) is not installed: the "
                      "facts 2.28.9 and 2.32.3 share are not compared";
    }
    ours_ = braidFacts();
  }

  braid::test::AbiFacts upstream_;
  braid::test::AbiFacts ours_;
};

TEST_F(UpstreamAbiTest, NumbersMatch) {
  const std::vector<std::string> names = braid::test::abiNumberNames();
  ASSERT_EQ(ours_.numbers.size(), names.size());
  ASSERT_EQ(upstream_.numbers.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(ours_.numbers[i], upstream_.numbers[i]) << names[i];
  }
}

// The config struct's tag names its release (ncclConfig_v22800, ncclConfig_v23000); the C ABI
// does not see tags (the functions are extern "C", unmangled), and the layout 2.28 knows is the
// same, so the comparison reads every release's tag as one.
std::string withoutConfigRelease(std::string type) {
  const std::string tag = "ncclConfig_v2";
  for (size_t at = type.find(tag); at != std::string::npos; at = type.find(tag, at + 1)) {
    type.replace(at + tag.size(), 4, "xxxx");
  }
  return type;
}

TEST_F(UpstreamAbiTest, FunctionTypesMatch) {
  ASSERT_EQ(ours_.functions.size(), upstream_.functions.size());
  for (size_t i = 0; i < ours_.functions.size(); ++i) {
    ASSERT_EQ(ours_.functions[i].name, upstream_.functions[i].name);
    EXPECT_EQ(withoutConfigRelease(ours_.functions[i].type),
              withoutConfigRelease(upstream_.functions[i].type))
        << ours_.functions[i].name;
  }
}

TEST_F(UpstreamAbiTest, SuffixMatches) { EXPECT_EQ(ours_.suffix, upstream_.suffix); }

// The list itself must be what the comparisons above assume.
TEST(NcclAbiTest, FactListIsConsistent) {
  const std::vector<std::string> names = braid::test::abiNumberNames();
  EXPECT_EQ(names.size(), static_cast<size_t>(kBraidAbiNumberCount));
  const braid::test::AbiFacts ours = braidFacts();
  EXPECT_EQ(ours.numbers[indexOf(names, "NCCL_MAJOR")], 2);
  EXPECT_EQ(ours.numbers[indexOf(names, "ncclConfig_t_offsetof_nvlinkCentricSched")], 76);
  EXPECT_EQ(ours.functions.size(), 2u * 41u);
}

}  // namespace
