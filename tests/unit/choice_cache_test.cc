// The communicator keeps the selector's answers for its recent calls
// (ChoiceCache, src/comm/selector.h). These check the list itself (what it keeps,
// what it drops, which calls it tells apart), and that Selector::choose,
// answering from it, gives every call of a long mixed sequence the choice a
// communicator that has never seen a call gives, and for an all_reduce the
// choice tune::choose gives.
//
// The selector is set up the way Comm::create and Links::connectRing leave it
// for rank 0 of 4 ranks on 2 cores, without a bootstrap or shared memory: it
// only needs to know that a one-shot board exists and how large a message it
// takes, which a 1-rank board (which maps nothing) says for the 4-rank one.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "comm/selector.h"
#include "exec/one_shot.h"
#include "tune/cost_model.h"
#include "tune/select.h"

namespace braid {
namespace {

using comm::ChoiceCache;
using comm::ChoiceKey;
using comm::Selector;

constexpr size_t kEntries = ChoiceCache::kEntries;

ChoiceKey keyOf(Collective collective, size_t bytes, bool variableCounts = false) {
  ChoiceKey key;
  key.collective = collective;
  key.bytes = bytes;
  key.variableCounts = variableCounts;
  return key;
}

// Answers told apart by their predicted time.
tune::Choice answer(double us) {
  tune::Choice choice;
  choice.predictedUs = us;
  return choice;
}

TEST(SelectionCache, KeepsTheMostRecentAndDropsTheLeastRecent) {
  ChoiceCache cache;
  EXPECT_EQ(cache.find(keyOf(Collective::kAllReduce, 8)), nullptr);
  for (size_t i = 0; i < kEntries; ++i) {
    cache.insert(keyOf(Collective::kAllReduce, size_t(8) << i), answer(static_cast<double>(i)));
  }
  EXPECT_EQ(cache.size(), kEntries);
  // Finding the oldest makes it the most recent, so the next insertion drops the second oldest.
  const tune::Choice* oldest = cache.find(keyOf(Collective::kAllReduce, 8));
  ASSERT_NE(oldest, nullptr);
  EXPECT_EQ(oldest->predictedUs, 0);
  cache.insert(keyOf(Collective::kAllReduce, 1), answer(100));
  EXPECT_EQ(cache.size(), kEntries);
  EXPECT_EQ(cache.find(keyOf(Collective::kAllReduce, 16)), nullptr);
  for (size_t i = 0; i < kEntries; ++i) {
    if (i == 1) continue;
    const tune::Choice* kept = cache.find(keyOf(Collective::kAllReduce, size_t(8) << i));
    ASSERT_NE(kept, nullptr) << (size_t(8) << i) << " B";
    EXPECT_EQ(kept->predictedUs, static_cast<double>(i));
  }
  const tune::Choice* newest = cache.find(keyOf(Collective::kAllReduce, 1));
  ASSERT_NE(newest, nullptr);
  EXPECT_EQ(newest->predictedUs, 100);
}

TEST(SelectionCache, TellsCollectivesSizesAndVariableCountsApart) {
  ChoiceCache cache;
  const std::vector<ChoiceKey> keys = {
      keyOf(Collective::kAllReduce, 4096),     keyOf(Collective::kBroadcast, 4096),
      keyOf(Collective::kReduceScatter, 4096), keyOf(Collective::kReduceScatter, 4096, true),
      keyOf(Collective::kAllReduce, 4097),
  };
  for (size_t i = 0; i < keys.size(); ++i) cache.insert(keys[i], answer(static_cast<double>(i)));
  for (size_t i = 0; i < keys.size(); ++i) {
    const tune::Choice* found = cache.find(keys[i]);
    ASSERT_NE(found, nullptr) << i;
    EXPECT_EQ(found->predictedUs, static_cast<double>(i)) << i;
  }
}

// What BRAID_ALGO, BRAID_PROTO and BRAID_DETERMINISTIC say.
struct Setting {
  const char* algo;
  const char* proto;
  bool deterministic;
};

// The settings Comm::create and Links::connectRing leave for rank 0 of 4 on 2 cores; false where
// they cannot be made.
bool settingsFor(const Setting& setting, comm::SelectorSettings* out) {
  comm::SelectorSettings& settings = *out;
  settings.algoForced = setting.algo[0] != '\0';
  settings.nranks = 4;
  settings.nchannels = 2;
  settings.model = tune::Model::calibratedDefaults();
  settings.model.hostCores = 2;
  settings.deterministic = setting.deterministic;
  auto allowed = tune::parseAllowed(setting.algo, setting.proto);
  EXPECT_TRUE(allowed.ok()) << allowed.status().message();
  if (!allowed.ok()) return false;
  settings.allowed = allowed.value();
  if (settings.allowed.algorithm[static_cast<int>(algo::Algorithm::kOneShot)]) {
    auto board = exec::OneShotBoard::create(0, 0, 1, exec::OneShotBoard::kDefaultMaxBytes,
                                            [] { return Status::success(); });
    EXPECT_TRUE(board.ok()) << board.status().message();
    if (!board.ok()) return false;
    settings.allowed.oneShotMaxBytes = board.value()->maxBytes();
    settings.oneShotBoard = true;
  }
  return true;
}

std::unique_ptr<Selector> commState(const Setting& setting) {
  comm::SelectorSettings settings;
  if (!settingsFor(setting, &settings)) return nullptr;
  return std::make_unique<Selector>(settings);
}

// Calls of every kind the selector tells apart: all_reduce across the one-shot board's limit
// and past it (more distinct sizes than the cache holds), the rooted collectives at an
// all_reduce's size, and reduce-scatter and all-gather uniform and with variable blocks whose
// largest block gives the uniform call's size.
struct Calls {
  std::vector<size_t> blocks = {256, 10, 0, 3};
  std::vector<size_t> offsets = {0, 256, 266, 266};
  std::vector<CollectiveCall> list;

  Calls() {
    for (size_t count : {1, 2, 16, 256, 1024, 4096, 16384, 16385, 262144}) {
      list.push_back(call(Collective::kAllReduce, count));
    }
    list.push_back(call(Collective::kBroadcast, 1024));
    list.push_back(call(Collective::kReduce, 1024));
    list.push_back(call(Collective::kReduceScatter, 256));
    list.push_back(call(Collective::kAllGather, 256));
    for (Collective c : {Collective::kReduceScatter, Collective::kAllGather}) {
      CollectiveCall v = call(c, blocks[0]);
      v.blockCounts = blocks.data();
      v.blockOffsets = offsets.data();
      list.push_back(v);
    }
  }

  static CollectiveCall call(Collective collective, size_t count) {
    const bool rooted = collective == Collective::kBroadcast || collective == Collective::kReduce;
    return {collective, nullptr, nullptr, count, DataType::kFloat32, RedOp::kSum, rooted ? 1 : -1};
  }
};

std::string describe(const CollectiveCall& call) {
  return std::string(collectiveName(call.collective)) + " of " + std::to_string(call.count) +
         (call.blockCounts != nullptr ? " (variable blocks)" : "");
}

void expectSameChoice(const tune::Choice& got, const tune::Choice& want) {
  EXPECT_EQ(algo::algorithmName(got.algorithm), std::string(algo::algorithmName(want.algorithm)));
  EXPECT_EQ(algo::protocolName(got.protocol), std::string(algo::protocolName(want.protocol)));
  EXPECT_EQ(got.predictedUs, want.predictedUs);
  EXPECT_EQ(got.fellBack, want.fellBack);
}

// A communicator across hosts asks the model about those hosts: the hops that cross them cost
// the network's figures, and one-shot, which reads its peers' memory, is never chosen there.
TEST(SelectionAcrossHosts, TheModelCountsTheCrossingsAndLeavesOneShotOut) {
  comm::SelectorSettings settings;
  ASSERT_TRUE(settingsFor(Setting{"", "", false}, &settings));
  for (auto& link : settings.model.interHost) link = {40.0, 1.0};  // a slow network
  auto one = std::make_unique<Selector>(settings);
  settings.nhosts = 2;
  auto two = std::make_unique<Selector>(settings);
  for (size_t count : {2, 256, 16384, 262144}) {
    const CollectiveCall call = Calls::call(Collective::kAllReduce, count);
    SCOPED_TRACE(describe(call));
    auto within = one->choose(call);
    auto across = two->choose(call);
    ASSERT_TRUE(within.ok()) << within.status().message();
    ASSERT_TRUE(across.ok()) << across.status().message();
    EXPECT_NE(across.value().algorithm, algo::Algorithm::kOneShot);
    EXPECT_GT(across.value().predictedUs, within.value().predictedUs + 40.0);
    tune::Query q;
    q.bytes = count * sizeof(float);
    q.nranks = settings.nranks;
    q.nhosts = 2;
    q.nchannels = settings.nchannels;
    auto direct = tune::choose(settings.model, q, settings.allowed);
    ASSERT_TRUE(direct.ok()) << direct.status().message();
    expectSameChoice(across.value(), direct.value());
  }
}

class SelectionCacheComm : public ::testing::TestWithParam<Setting> {};

TEST_P(SelectionCacheComm, RepeatedCallsGetTheChoiceOfAFreshCommunicator) {
  std::unique_ptr<Selector> comm = commState(GetParam());
  ASSERT_NE(comm, nullptr);
  const Calls calls;
  // Forwards, backwards, then every third call: each order brings back calls the cache holds
  // at other depths, and some it has dropped.
  std::vector<size_t> order;
  const size_t n = calls.list.size();
  for (size_t i = 0; i < n; ++i) order.push_back(i);
  for (size_t i = n; i-- > 0;) order.push_back(i);
  for (size_t start = 0; start < 3; ++start) {
    for (size_t i = start; i < n; i += 3) order.push_back(i);
  }
  for (size_t i : order) {
    const CollectiveCall& call = calls.list[i];
    SCOPED_TRACE(describe(call));
    auto got = comm->choose(call);
    ASSERT_TRUE(got.ok()) << got.status().message();
    std::unique_ptr<Selector> fresh = commState(GetParam());
    ASSERT_NE(fresh, nullptr);
    auto want = fresh->choose(call);
    ASSERT_TRUE(want.ok()) << want.status().message();
    expectSameChoice(got.value(), want.value());
    // An all_reduce of uniform counts is what tune::choose says for the communicator's settings.
    if (call.collective == Collective::kAllReduce) {
      tune::Query q;
      q.bytes = call.count * sizeof(float);
      const comm::SelectorSettings& settings = comm->settings();
      q.nranks = settings.nranks;
      q.nchannels = settings.nchannels;
      q.deterministic = settings.deterministic;
      auto direct = tune::choose(settings.model, q, settings.allowed);
      ASSERT_TRUE(direct.ok()) << direct.status().message();
      expectSameChoice(got.value(), direct.value());
    }
  }
  EXPECT_EQ(comm->keptChoices(), kEntries);
}

const Setting kSettings[] = {
    {"", "", false},
    {"", "", true},
    {"tree", "", false},
    {"ring,oneshot", "ll", false},
};

std::string settingName(const ::testing::TestParamInfo<Setting>& info) {
  const char* names[] = {"Default", "Deterministic", "TreeOnly", "RingOneShotLl"};
  return names[info.index];
}

INSTANTIATE_TEST_SUITE_P(Settings, SelectionCacheComm, ::testing::ValuesIn(kSettings), settingName);

}  // namespace
}  // namespace braid
