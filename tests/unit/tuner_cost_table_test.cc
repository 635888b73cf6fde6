// The cost table a tuner plugin sees and what braid reads back from it (tune/plugin/cost_table.h),
// and the version adapters' getCollInfo (tune/plugin/tuner_versions.cc) on tables written here.
#include <gtest/gtest.h>

#include "tune/plugin/cost_table.h"
#include "tune/plugin/tuner_plugin.h"

namespace braid::tune {
namespace {

using namespace braid::tunerabi;  // NOLINT(google-build-using-namespace): the ABI's names

Query allReduce(size_t bytes) {
  Query q;
  q.collective = Collective::kAllReduce;
  q.bytes = bytes;
  q.nranks = 4;
  return q;
}

Allowed everything() {
  Allowed a;
  a.oneShotMaxBytes = 65536;
  return a;
}

TEST(TunerCostTable, OffersTheRingAndTreeEntriesBraidWouldWeigh) {
  const Model model = Model::calibratedDefaults();
  Result<CostTable> t = modelTable(model, allReduce(1 << 20), everything());
  ASSERT_TRUE(t.ok()) << t.status().message();
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; ++a) {
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; ++p) {
      const bool offered = (a == NCCL_ALGO_RING || a == NCCL_ALGO_TREE) && p != NCCL_PROTO_LL128;
      if (offered) {
        EXPECT_GT(t.value().us[a][p], 0) << a << "," << p;
      } else {
        EXPECT_EQ(t.value().us[a][p], NCCL_ALGO_PROTO_IGNORE) << a << "," << p;
      }
    }
  }
  const Result<double> ring =
      predictUs(model, allReduce(1 << 20), algo::Algorithm::kRing, algo::Protocol::kSimple);
  ASSERT_TRUE(ring.ok());
  EXPECT_FLOAT_EQ(t.value().us[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE],
                  static_cast<float>(ring.value()));
}

TEST(TunerCostTable, IgnoresWhatTheUserOrTheCollectiveRulesOut) {
  Result<Allowed> simpleOnly = parseAllowed("", "simple");
  ASSERT_TRUE(simpleOnly.ok());
  Query gather = allReduce(1 << 20);
  gather.collective = Collective::kAllGather;
  Result<CostTable> t = modelTable(Model::calibratedDefaults(), gather, simpleOnly.value());
  ASSERT_TRUE(t.ok());
  EXPECT_GT(t.value().us[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 0);
  EXPECT_EQ(t.value().us[NCCL_ALGO_RING][NCCL_PROTO_LL], NCCL_ALGO_PROTO_IGNORE);
  EXPECT_EQ(t.value().us[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], NCCL_ALGO_PROTO_IGNORE);
}

// A table with ring/simple 10, ring/ll 20, tree/simple 30 offered; braid's own choice one-shot.
struct Offer {
  CostTable table = ignoredTable();
  Choice ours;
  Offer() {
    table.us[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = 10;
    table.us[NCCL_ALGO_RING][NCCL_PROTO_LL] = 20;
    table.us[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] = 30;
    ours.algorithm = algo::Algorithm::kOneShot;
    ours.predictedUs = 5;
  }
};

TEST(TunerCostTable, ATableLeftAsItWasKeepsBraidsChoice) {
  Offer o;
  std::optional<Choice> c = tunedChoice(o.ours, o.table, o.table, 0, 4);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->algorithm, algo::Algorithm::kOneShot);
  EXPECT_TRUE(c->pluginAsked);
  EXPECT_FALSE(c->pluginDecided);
  EXPECT_EQ(c->nchannels, 0);
}

TEST(TunerCostTable, TheCheapestEntryBraidOfferedDecides) {
  Offer o;
  CostTable answered = o.table;
  answered.us[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] = 0;
  answered.us[NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE] = 0;  // not offered: not taken
  answered.us[NCCL_ALGO_RING][NCCL_PROTO_LL] = -5;     // negative: ignored, as NCCL does
  std::optional<Choice> c = tunedChoice(o.ours, o.table, answered, 0, 4);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->algorithm, algo::Algorithm::kTree);
  EXPECT_EQ(c->protocol, algo::Protocol::kSimple);
  EXPECT_EQ(c->predictedUs, 30);  // braid's prediction for what runs
  EXPECT_TRUE(c->pluginDecided);
}

TEST(TunerCostTable, ATableWithNothingBraidRunsLeavesTheChoiceToTheCaller) {
  Offer o;
  CostTable answered = ignoredTable();
  answered.us[NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE] = 1;
  EXPECT_FALSE(tunedChoice(o.ours, o.table, answered, 0, 4).has_value());
}

TEST(TunerCostTable, TheChannelCountStaysWithinTheCommunicators) {
  Offer o;
  std::optional<Choice> two = tunedChoice(o.ours, o.table, o.table, 2, 4);
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->nchannels, 2);
  EXPECT_TRUE(two->pluginDecided);
  EXPECT_EQ(tunedChoice(o.ours, o.table, o.table, 64, 4)->nchannels, 4);
  EXPECT_EQ(tunedChoice(o.ours, o.table, o.table, -3, 4)->nchannels, 0);
}

TEST(TunerCostTable, TheConstantsCarryTheModelsLatencies) {
  Model model = Model::calibratedDefaults();
  const ncclTunerConstants_v5_t c = modelConstants(model);
  EXPECT_EQ(c.baseLatencies[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], model.callUs);
  EXPECT_EQ(c.hwLatencies[NCCL_HW_NET][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE],
            model.interHost[0].latencyUs);
  EXPECT_EQ(c.hwLatencies[NCCL_HW_PCI][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE], 0);
}

// A v2 plugin written here: names the tree and Simple, and 3 channels.
ncclResult_t v2Init(size_t, size_t, ncclDebugLogger_t, void** context) {
  *context = nullptr;
  return ncclSuccess;
}
ncclResult_t v2Info(void*, ncclFunc_t, size_t, int collNet, int nvls, int, int* algorithm,
                    int* protocol, int* nChannels) {
  if (collNet != 0 || nvls != 0) return ncclInternalError;  // braid offers neither
  *algorithm = NCCL_ALGO_TREE;
  *protocol = NCCL_PROTO_SIMPLE;
  *nChannels = 3;
  return ncclSuccess;
}
ncclResult_t v2Destroy(void*) { return ncclSuccess; }
ncclResult_t v2Fails(void*, ncclFunc_t, size_t, int, int, int, int*, int*, int*) {
  return ncclSystemError;
}

TEST(TunerVersions, AV2AnswerBecomesAFreeEntry) {
  const ncclTuner_v2_t table{"v2here", v2Init, v2Info, v2Destroy};
  std::unique_ptr<TunerPlugin> plugin = adoptTunerTable(2, &table, "here.so");
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->describe(), "v2here (v2, here.so)");
  TunerInit init;
  Result<void*> ctx = plugin->init(init);
  ASSERT_TRUE(ctx.ok());
  Offer o;
  CostTable answered = o.table;
  int nChannels = 0;
  ASSERT_TRUE(
      plugin->getCollInfo(ctx.value(), ncclFuncAllReduce, 64, 1, answered, false, &nChannels).ok());
  EXPECT_EQ(answered.us[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], 0);
  EXPECT_EQ(answered.us[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 10);
  EXPECT_EQ(nChannels, 3);
  // An entry braid ignores stays ignored whatever the plugin names.
  CostTable none = ignoredTable();
  ASSERT_TRUE(
      plugin->getCollInfo(ctx.value(), ncclFuncAllReduce, 64, 1, none, false, &nChannels).ok());
  EXPECT_EQ(none.us[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], NCCL_ALGO_PROTO_IGNORE);
  EXPECT_TRUE(plugin->finalize(ctx.value()).ok());
}

TEST(TunerVersions, AFailedCallNamesThePluginAndTheCall) {
  const ncclTuner_v2_t table{"v2here", v2Init, v2Fails, v2Destroy};
  std::unique_ptr<TunerPlugin> plugin = adoptTunerTable(2, &table, "here.so");
  CostTable t = ignoredTable();
  int nChannels = 0;
  Status s = plugin->getCollInfo(nullptr, ncclFuncAllReduce, 64, 1, t, false, &nChannels);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("TUNER plugin v2here (v2, here.so): getCollInfo failed with result 2"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(adoptTunerTable(7, &table, "here.so"), nullptr);
}

}  // namespace
}  // namespace braid::tune
