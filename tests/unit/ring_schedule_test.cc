// The ring all-reduce generator, checked symbolically: the schedules of all
// ranks run together on braid-sim's model of schedules on FIFOs
// (tools/sim/symbolic_check.h: same slot count as the real FIFOs, so a
// schedule that could deadlock fails here), with values that count every
// rank's contribution to every element and say which element they are, so a
// contribution counted twice or missed, or an element of the wrong rank or
// position, shows in the output. The other ring collectives are in
// ring_collectives_test.cc; the model's own tests in tools/sim/tests.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "algo/ring.h"
#include "symbolic_check.h"

namespace braid::algo {
namespace {

// Runs all ranks' schedules to completion on the model, out of place, and
// checks that every rank ends with every contribution to every element once.
void expectAllReduced(int nranks, size_t count, size_t chunk, size_t slice, int nchannels,
                      std::vector<int> order = {}) {
  std::vector<Schedule> schedules;
  std::vector<sim::BufferLayout> layouts;
  for (int r = 0; r < nranks; ++r) {
    RingParams p;
    p.nranks = nranks;
    p.rank = r;
    p.order = order;
    p.count = count;
    p.chunkElems = chunk;
    p.maxSliceElems = slice;
    p.nchannels = nchannels;
    auto s = ringAllReduce(p);
    ASSERT_TRUE(s.ok()) << s.status().message();
    schedules.push_back(std::move(s).value());
    layouts.push_back(sim::separateBuffers(count, count));
  }
  auto everyContribution = [count](int, const sim::RankKeys& keys) {
    sim::Value v;
    sim::appendPiece(v, sim::Piece{count, 0, keys.all()});
    return std::optional<sim::Value>(v);
  };
  auto run = sim::checkOnBuffers(schedules, layouts, everyContribution);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run.value().ranksChecked, static_cast<uint64_t>(nranks));
}

class RingAllReduceModel : public ::testing::TestWithParam<int> {};

TEST_P(RingAllReduceModel, EveryRankHoldsTheSumForAssortedCounts) {
  const int n = GetParam();
  const size_t counts[] = {0, 1, 2, 7, 13, 97, 1000, 1021, size_t(n) * 37 + 1, 4099};
  for (size_t count : counts) {
    SCOPED_TRACE("count " + std::to_string(count));
    // Small chunks force many rounds; small slices force many slices a step.
    expectAllReduced(n, count, 16, 5, 1);
    expectAllReduced(n, count, 1 << 20, 1 << 18, 1);
  }
}

TEST_P(RingAllReduceModel, ChannelsSplitTheWorkCorrectly) {
  const int n = GetParam();
  for (int channels : {2, 3}) {
    SCOPED_TRACE("channels " + std::to_string(channels));
    expectAllReduced(n, 1009, 11, 3, channels);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks1To16, RingAllReduceModel, ::testing::Range(1, 17));

TEST(RingAllReduce, AnyRingOrderWorks) { expectAllReduced(5, 503, 7, 3, 1, {3, 0, 4, 1, 2}); }

// A chunk of many slices used to fill the FIFO at step 0 on every rank at
// once; the chunk is now cut so that a message takes at most half the FIFO.
TEST(RingAllReduce, ChunksOfManySlicesDoNotDeadlock) {
  for (int n : {2, 3, 8}) {
    SCOPED_TRACE("nranks " + std::to_string(n));
    expectAllReduced(n, 4099, 64, 1, 1);
    expectAllReduced(n, 1000, 1 << 20, 3, 2);
  }
}

TEST(RingAllReduce, StepsFollowTheTextbookPattern) {
  RingParams p;
  p.nranks = 4;
  p.rank = 1;
  p.count = 400;
  p.chunkElems = 100;
  p.maxSliceElems = 100;
  auto s = ringAllReduce(p);
  ASSERT_TRUE(s.ok());
  const auto& steps = s.value().channels[0].steps;
  ASSERT_EQ(steps.size(), 7u);  // 2N - 1 steps for one round
  EXPECT_EQ(steps[0].op, StepOp::kSend);
  EXPECT_EQ(steps[0].chunk, 1);
  EXPECT_EQ(steps[0].sendPeer, 2);
  EXPECT_EQ(steps[1].op, StepOp::kRecvReduceSend);
  EXPECT_EQ(steps[1].recvPeer, 0);
  EXPECT_EQ(steps[3].op, StepOp::kRecvReduceCopySend);
  EXPECT_EQ(steps[3].chunk, 2);  // rank p owns chunk p+1 after reduce-scatter
  EXPECT_EQ(steps[6].op, StepOp::kRecv);
}

TEST(RingAllReduce, BadParametersAreRejected) {
  RingParams p;
  p.nranks = 0;
  EXPECT_EQ(ringAllReduce(p).status().code(), ErrorCode::kInvalidArgument);
  p.nranks = 3;
  p.rank = 3;
  EXPECT_EQ(ringAllReduce(p).status().code(), ErrorCode::kInvalidArgument);
  p.rank = 0;
  p.order = {0, 1, 1};
  EXPECT_EQ(ringAllReduce(p).status().code(), ErrorCode::kInvalidArgument);
  p.order = {};
  p.chunkElems = 0;
  EXPECT_EQ(ringAllReduce(p).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ScheduleDump, NamesStepsPeersAndRanges) {
  RingParams p;
  p.nranks = 2;
  p.rank = 0;
  p.count = 10;
  p.chunkElems = 100;
  p.maxSliceElems = 100;
  auto s = ringAllReduce(p);
  ASSERT_TRUE(s.ok());
  std::string text = formatSchedule(s.value(), DataType::kFloat32);
  EXPECT_NE(text.find("rank 0 of 2"), std::string::npos) << text;
  EXPECT_NE(text.find("recvReduceCopySend"), std::string::npos) << text;
  EXPECT_NE(text.find("elements [0, 5)"), std::string::npos) << text;
  EXPECT_NE(text.find("to 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace braid::algo
