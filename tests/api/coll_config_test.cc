// The collectives with per-call options (ncclAllReduceConfig ..., NCCL 2.31's ncclCollConfig_t):
// what braid applies of a call's options (algorithm selection, channel bounds, CTA policy), seen
// in BRAID_TRACE's record of each call and in its results, and every bad option refused with a
// message that names it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "braid_ext.h"
#include "nccl.h"
#include "support/multiprocess.h"

namespace coll_config_test {

using braid::testing::failsWith;
using braid::testing::fileText;
using braid::testing::occurrencesOf;
using braid::testing::OneRankTest;
using braid::testing::ScopedEnv;

constexpr int kRanks = 3;
constexpr size_t kCount = 1 << 16;  // large enough for a scheduled ring or tree

// Runs `body(rank, comm)` on kRanks threads of one host communicator of 4 channels, with
// BRAID_TRACE on, and returns rank 0's trace.
std::string traceOf(const std::function<void(int, ncclComm_t)>& body) {
  const std::string pattern =
      "/tmp/braid-coll-config-test-" + std::to_string(getpid()) + "-%r.json";
  {
    ScopedEnv trace("BRAID_TRACE", pattern.c_str());
    ScopedEnv channels("BRAID_NCHANNELS", "4");
    ScopedEnv host("BRAID_HOST_COMM", "1");
    std::vector<ncclComm_t> comms(kRanks);
    EXPECT_EQ(ncclCommInitAll(comms.data(), kRanks, nullptr), ncclSuccess);
    braid::testing::runThreads(kRanks, [&](int rank) { body(rank, comms[rank]); });
    for (auto c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  }
  std::string json;
  for (int r = 0; r < kRanks; ++r) {
    const std::string path = pattern.substr(0, pattern.find("%r")) + std::to_string(r) + ".json";
    if (r == 0) json = fileText(path);
    unlink(path.c_str());
  }
  return json;
}

// An all-reduce of kCount ones with `config`; every element must become kRanks.
void sumOnes(ncclComm_t comm, const ncclCollConfig_t* config) {
  std::vector<float> buf(kCount, 1.0f);
  ASSERT_EQ(ncclAllReduceConfig(buf.data(), buf.data(), kCount, ncclFloat32, ncclSum, comm, nullptr,
                                config),
            ncclSuccess)
      << ncclGetLastError(comm);
  for (float v : buf) ASSERT_EQ(v, static_cast<float>(kRanks));
}

TEST(CollConfig, AlgorithmSelectionChoosesTheAlgorithmAndProtocol) {
  const std::string json = traceOf([](int, ncclComm_t comm) {
    ncclCollConfig_t tree = NCCL_COLLCONFIG_INITIALIZER;
    tree.algSelection = "tree";
    ncclCollConfig_t ringLl = NCCL_COLLCONFIG_INITIALIZER;
    ringLl.algSelection = "ring + ^ring_simple";  // the ring, but not its simple protocol
    sumOnes(comm, &tree);
    sumOnes(comm, &ringLl);
    sumOnes(comm, &tree);
  });
  EXPECT_EQ(occurrencesOf(json, "\"algorithm\":\"tree\""), 2u) << json;
  EXPECT_EQ(occurrencesOf(json, "\"algorithm\":\"ring\",\"protocol\":\"ll\""), 1u) << json;
}

TEST(CollConfig, ChannelBoundsAndPolicyNarrowTheCall) {
  const std::string json = traceOf([](int, ncclComm_t comm) {
    ncclCollConfig_t two = NCCL_COLLCONFIG_INITIALIZER;
    two.algSelection = "ring_simple";
    two.maxCTAs = 2;
    ncclCollConfig_t efficient = NCCL_COLLCONFIG_INITIALIZER;
    efficient.algSelection = "ring_simple";
    efficient.CTAPolicy = NCCL_CTA_POLICY_EFFICIENCY;
    ncclCollConfig_t all = NCCL_COLLCONFIG_INITIALIZER;
    all.algSelection = "ring_simple";
    all.minCTAs = 3;  // a lower bound leaves the default, the most channels, as it is
    sumOnes(comm, &two);
    sumOnes(comm, &efficient);
    sumOnes(comm, &all);
  });
  EXPECT_EQ(occurrencesOf(json, "\"channels\":2,"), 1u) << json;
  EXPECT_EQ(occurrencesOf(json, "\"channels\":1,"), 1u) << json;
  EXPECT_EQ(occurrencesOf(json, "\"channels\":4,"), 1u) << json;
}

// Inside a group each call keeps its own options, and a NULL config is the plain call.
TEST(CollConfig, GroupedCallsKeepTheirOwnOptions) {
  const std::string json = traceOf([](int, ncclComm_t comm) {
    ncclCollConfig_t tree = NCCL_COLLCONFIG_INITIALIZER;
    tree.algSelection = "TREE_SIMPLE";
    ncclCollConfig_t one = NCCL_COLLCONFIG_INITIALIZER;
    one.algSelection = "RING_SIMPLE";
    one.maxCTAs = 1;
    std::vector<float> a(kCount, 1.0f), b(kCount, 2.0f), c(kCount, 3.0f);
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(
        ncclAllReduceConfig(a.data(), a.data(), kCount, ncclFloat32, ncclSum, comm, nullptr, &tree),
        ncclSuccess);
    EXPECT_EQ(
        ncclAllReduceConfig(b.data(), b.data(), kCount, ncclFloat32, ncclSum, comm, nullptr, &one),
        ncclSuccess);
    EXPECT_EQ(ncclAllReduceConfig(c.data(), c.data(), kCount, ncclFloat32, ncclMax, comm, nullptr,
                                  nullptr),
              ncclSuccess);
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comm);
    EXPECT_EQ(a[kCount - 1], 3.0f);
    EXPECT_EQ(b[0], 6.0f);
    EXPECT_EQ(c[7], 3.0f);
  });
  EXPECT_EQ(occurrencesOf(json, "\"algorithm\":\"tree\""), 1u) << json;
  EXPECT_EQ(occurrencesOf(json, "\"channels\":1,"), 1u) << json;
}

// Every collective's Config form gives the plain collective's results.
TEST(CollConfig, EveryCollectiveRunsWithOptions) {
  traceOf([](int rank, ncclComm_t comm) {
    ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
    config.maxCTAs = 1;
    const size_t n = 8;
    std::vector<int> send(n * kRanks), recv(n * kRanks, -1);
    for (size_t i = 0; i < send.size(); ++i) send[i] = rank * 100 + static_cast<int>(i);
    EXPECT_EQ(
        ncclBroadcastConfig(send.data(), recv.data(), n, ncclInt32, 1, comm, nullptr, &config),
        ncclSuccess);
    EXPECT_EQ(recv[3], 103);
    EXPECT_EQ(ncclReduceConfig(send.data(), recv.data(), n, ncclInt32, ncclSum, 0, comm, nullptr,
                               &config),
              ncclSuccess);
    if (rank == 0) EXPECT_EQ(recv[2], 300 + 3 * 2);
    EXPECT_EQ(ncclAllGatherConfig(send.data(), recv.data(), n, ncclInt32, comm, nullptr, &config),
              ncclSuccess);
    EXPECT_EQ(recv[n * 2 + 1], 201);
    EXPECT_EQ(ncclReduceScatterConfig(send.data(), recv.data(), n, ncclInt32, ncclMax, comm,
                                      nullptr, &config),
              ncclSuccess);
    EXPECT_EQ(recv[0], 200 + static_cast<int>(n) * rank);
    EXPECT_EQ(ncclAlltoAllConfig(send.data(), recv.data(), n, ncclInt32, comm, nullptr, &config),
              ncclSuccess);
    EXPECT_EQ(recv[n * 2], 200 + static_cast<int>(n) * rank);
    EXPECT_EQ(ncclGatherConfig(send.data(), recv.data(), n, ncclInt32, 2, comm, nullptr, &config),
              ncclSuccess);
    if (rank == 2) EXPECT_EQ(recv[n + 5], 105);
    EXPECT_EQ(ncclScatterConfig(send.data(), recv.data(), n, ncclInt32, 0, comm, nullptr, &config),
              ncclSuccess);
    EXPECT_EQ(recv[1], static_cast<int>(n) * rank + 1);
  });
}

// A selection braid cannot honour is an error while forceAlgSelection is 1; with 0 the call runs
// as the communicator chooses.
TEST(CollConfig, UnsatisfiableSelectionFailsOnlyWhenForced) {
  traceOf([](int, ncclComm_t comm) {
    std::vector<float> buf(64, 1.0f);
    ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
    config.algSelection = "TREE";  // no tree all-gather
    auto allGather = [&] {
      return ncclAllGatherConfig(buf.data(), buf.data(), 16, ncclFloat32, comm, nullptr, &config);
    };
    EXPECT_TRUE(failsWith(allGather, ncclInvalidArgument, {"algSelection", "AllGather"}, comm));
    config.forceAlgSelection = 0;
    EXPECT_EQ(allGather(), ncclSuccess) << ncclGetLastError(comm);
  });
}

class CollConfigBadInput : public OneRankTest {
 protected:
  ncclResult_t allReduce(const ncclCollConfig_t* config) {
    return ncclAllReduceConfig(buf_, buf_, 4, ncclFloat32, ncclSum, comm_, nullptr, config);
  }
  float buf_[4] = {1, 2, 3, 4};
};

TEST_F(CollConfigBadInput, UninitializedConfigIsRefused) {
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.magic = 0;
  EXPECT_TRUE(failsWith([&] { return allReduce(&config); }, ncclInvalidArgument,
                        {"ncclAllReduceConfig", "NCCL_COLLCONFIG_INITIALIZER"}));
  config = NCCL_COLLCONFIG_INITIALIZER;
  config.size = 40;
  EXPECT_TRUE(failsWith([&] { return allReduce(&config); }, ncclInvalidArgument, {"size 40"}));
}

TEST_F(CollConfigBadInput, BadSelectionIsRefusedUnlessNotForced) {
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  for (const char* bad : {"bogus", "ring,", "+tree", "NVLS", "^ring+^tree+^oneshot"}) {
    config.algSelection = bad;
    config.forceAlgSelection = 1;
    EXPECT_TRUE(
        failsWith([&] { return allReduce(&config); }, ncclInvalidArgument, {"algSelection", bad}))
        << bad;
    config.forceAlgSelection = 0;
    EXPECT_EQ(allReduce(&config), ncclSuccess) << bad << ": " << ncclGetLastError(comm_);
  }
}

TEST_F(CollConfigBadInput, UnknownCtaPolicyBitsAreRefused) {
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.CTAPolicy = 0x10;
  EXPECT_TRUE(failsWith([&] { return allReduce(&config); }, ncclInvalidArgument, {"CTAPolicy"}));
  config.CTAPolicy = NCCL_CTA_POLICY_ZERO | NCCL_CTA_POLICY_EFFICIENCY;
  EXPECT_EQ(allReduce(&config), ncclSuccess) << ncclGetLastError(comm_);
}

// Out-of-range CTA bounds are ignored, as NCCL ignores them (with a warning).
TEST_F(CollConfigBadInput, OutOfRangeCtaBoundsAreIgnored) {
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.minCTAs = 1000;
  config.maxCTAs = -3;
  EXPECT_EQ(allReduce(&config), ncclSuccess) << ncclGetLastError(comm_);
}

TEST_F(CollConfigBadInput, VendorExtensionsOfOthersAreIgnoredAndBraidsChecked) {
  ncclConfigExt_t other{};
  other.key.vendorId = 0x123456;
  other.key.optionId = 7;
  other.val.i = 1;
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.ext = &other;
  EXPECT_EQ(allReduce(&config), ncclSuccess) << ncclGetLastError(comm_);
  ncclConfigExt_t ours{};
  ours.key.vendorId = BRAID_CONFIG_EXT_VENDOR_ID;
  ours.key.optionId = 3;
  other.next = &ours;
  EXPECT_TRUE(failsWith([&] { return allReduce(&config); }, ncclInvalidArgument,
                        {"vendor id", "no option 3"}));
  ours.key.vendorId = 0x654321;
  ours.next = &other;  // a loop
  EXPECT_TRUE(failsWith([&] { return allReduce(&config); }, ncclInvalidArgument, {"loop"}));
}

// Point-to-point collectives have no algorithm to select.
TEST_F(CollConfigBadInput, SelectionForPointToPointCollectivesIsRefused) {
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.algSelection = "ring";
  float out[4];
  EXPECT_TRUE(failsWith(
      [&] { return ncclAlltoAllConfig(buf_, out, 4, ncclFloat32, comm_, nullptr, &config); },
      ncclInvalidArgument, {"ncclAlltoAllConfig", "point-to-point"}));
  config.forceAlgSelection = 0;
  EXPECT_EQ(ncclAlltoAllConfig(buf_, out, 4, ncclFloat32, comm_, nullptr, &config), ncclSuccess);
}

// A host communicator launches no kernel, so the launch event is not recorded, as NCCL records
// none for work that launches none; the call itself runs.
TEST_F(CollConfigBadInput, HostCommunicatorRunsWithALaunchEvent) {
  if (braidGetDeviceApi()->deviceCount() > 0) GTEST_SKIP() << "this machine has a GPU";
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.launchCompletionEvent = reinterpret_cast<cudaEvent_t>(0x1);  // never dereferenced
  EXPECT_EQ(allReduce(&config), ncclSuccess) << ncclGetLastError(comm_);
}

}  // namespace coll_config_test
