// The ring generators for reduce-scatter, all-gather, broadcast and reduce
// (and all-reduce in place), checked symbolically on the FIFO model of
// tests/support/schedule_model.h: every rank's schedule runs together (a
// deadlock fails), out of place and in place with the model's buffers
// aliased as NCCL's rules say, and every rank's output is checked exactly.
// Reductions use the nibble values of the model (rank r adds 1 << 4r, so a
// contribution counted twice or missed shows); copies carry a tag that says
// which rank's which element a value is.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "algo/ring.h"
#include "algo/ring_common.h"
#include "support/schedule_model.h"
#include "transport/connection.h"

namespace braid::algo {
namespace {

using testing::ModelRank;
using testing::ModelValue;

static_assert(kFifoSlotsAssumed == static_cast<size_t>(transport::kFifoSlots),
              "ring schedules are sized for a different FIFO than the transports have");

ModelValue reduced(int nranks, size_t element) {
  ModelValue v;
  for (int q = 0; q < nranks; ++q) v = v + testing::modelReducedNibble(q, element);
  return v;
}

struct Shape {
  size_t chunk;
  size_t slice;
  int channels;
  size_t minSlice = 1;
};

// Large chunks (one round, one slice); small chunks and slices (many rounds,
// several slices a step); chunks of many slices (cut to half the FIFO); and
// several channels.
const Shape kShapes[] = {
    {1 << 20, 1 << 18, 1}, {16, 5, 1}, {64, 2, 1}, {9, 2, 2}, {40, 3, 3}, {1 << 20, 7, 2, 4},
};

struct Call {
  Collective collective;
  int nranks;
  size_t count;
  Shape shape;
  int root = 0;
  bool inPlace = false;
  std::vector<int> order = {};
  std::vector<std::vector<int>> channelOrders = {};
};

std::string describe(const Call& c) {
  return std::string(collectiveName(c.collective)) + " nranks " + std::to_string(c.nranks) +
         " count " + std::to_string(c.count) + " chunk " + std::to_string(c.shape.chunk) +
         " slice " + std::to_string(c.shape.slice) + " channels " +
         std::to_string(c.shape.channels) + " root " + std::to_string(c.root) +
         (c.inPlace ? " in place" : " out of place");
}

Result<Schedule> generate(const Call& c, int rank) {
  RingParams p;
  p.nranks = c.nranks;
  p.rank = rank;
  p.order = c.order;
  p.channelOrders = c.channelOrders;
  p.count = c.count;
  p.chunkElems = c.shape.chunk;
  p.maxSliceElems = c.shape.slice;
  p.minSliceElems = c.shape.minSlice;
  p.nchannels = c.shape.channels;
  switch (c.collective) {
    case Collective::kAllReduce:
      return ringAllReduce(p);
    case Collective::kReduceScatter:
      return ringReduceScatter(p);
    case Collective::kAllGather:
      return ringAllGather(p);
    case Collective::kBroadcast:
      return ringBroadcast(p, c.root);
    case Collective::kReduce:
      return ringReduce(p, c.root);
  }
  return internalError("unknown collective");
}

// Lays out rank r's buffers, with NCCL's in-place aliasing where asked, and
// fills its input.
void layout(const Call& c, int r, ModelRank& rank) {
  const size_t n = c.nranks;
  const size_t count = c.count;
  const size_t inLen = c.collective == Collective::kReduceScatter ? n * count : count;
  const size_t outLen = c.collective == Collective::kAllGather ? n * count : count;
  if (!c.inPlace) {
    rank.layOut(inLen + outLen, 0, inLen, inLen, outLen, testing::kModelPoison);
  } else if (c.collective == Collective::kAllGather) {
    rank.layOut(outLen, r * count, inLen, 0, outLen,
                testing::kModelPoison);  // send = recv + r*count
  } else if (c.collective == Collective::kReduceScatter) {
    rank.layOut(inLen, 0, inLen, r * count, outLen,
                testing::kModelPoison);  // recv = send + r*count
  } else {
    rank.layOut(count, 0, inLen, 0, outLen, testing::kModelPoison);  // send = recv
  }
  ModelValue* input = rank.input();
  for (size_t i = 0; i < inLen; ++i) {
    switch (c.collective) {
      case Collective::kAllReduce:
      case Collective::kReduceScatter:
      case Collective::kReduce:
        input[i] = testing::modelReducedNibble(r, i);
        break;
      case Collective::kAllGather:
        input[i] = testing::modelCopied(r, i);
        break;
      case Collective::kBroadcast:
        input[i] = r == c.root ? testing::modelCopied(r, i)
                               : testing::kModelPoison;  // only the root's is read
        break;
    }
  }
}

// The reductions of elements [0, elements) over `nranks`, computed once per
// rank count: the tests ask for the same ones many times.
const std::vector<ModelValue>& reducedTable(int nranks, size_t elements) {
  static int tableRanks = 0;
  static std::vector<ModelValue> table;
  if (tableRanks != nranks) {
    tableRanks = nranks;
    table.clear();
  }
  for (size_t i = table.size(); i < elements; ++i) table.push_back(reduced(nranks, i));
  return table;
}

ModelValue expected(const Call& c, int r, size_t i) {
  const size_t maxReduced =
      c.collective == Collective::kReduceScatter ? c.nranks * c.count : c.count;
  switch (c.collective) {
    case Collective::kAllReduce:
      return reducedTable(c.nranks, maxReduced)[i];
    case Collective::kReduceScatter:
      return reducedTable(c.nranks, maxReduced)[r * c.count + i];
    case Collective::kAllGather:
      return testing::modelCopied(static_cast<int>(i / c.count), i % c.count);
    case Collective::kBroadcast:
      return testing::modelCopied(c.root, i);
    case Collective::kReduce:
      if (r == c.root) return reducedTable(c.nranks, maxReduced)[i];
      return c.inPlace ? testing::modelReducedNibble(r, i)
                       : testing::kModelPoison;  // a non-root output is left alone
  }
  return testing::kModelPoison;
}

// Runs `c` on the model and checks every rank's output element by element.
// The ranks' memory is kept from call to call, so that the model does not
// fault in fresh pages for every run.
void check(const Call& c) {
  SCOPED_TRACE(describe(c));
  static std::vector<ModelRank> ranks;
  ranks.resize(c.nranks);
  for (int r = 0; r < c.nranks; ++r) {
    auto s = generate(c, r);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ranks[r].schedule = std::move(s).value();
    layout(c, r, ranks[r]);
  }
  Status run = testing::runModel(ranks);
  ASSERT_TRUE(run.ok()) << run.message();
  for (int r = 0; r < c.nranks; ++r) {
    const ModelValue* out = ranks[r].outputData();
    for (size_t i = 0; i < ranks[r].outLen; ++i) {
      ASSERT_EQ(out[i], expected(c, r, i)) << "rank " << r << " output element " << i;
    }
  }
}

const size_t kCounts[] = {0, 1, 2, 7, 13, 97, 1000, 4099};

std::vector<int> rootsFor(int n) {
  std::vector<int> roots;
  if (n <= 8) {
    for (int r = 0; r < n; ++r) roots.push_back(r);
  } else {
    roots = {0, 1, n / 2, n - 1};
  }
  return roots;
}

class RingCollectivesModel : public ::testing::TestWithParam<int> {};

TEST_P(RingCollectivesModel, ReduceScatterAndAllGather) {
  const int n = GetParam();
  for (Collective coll : {Collective::kReduceScatter, Collective::kAllGather}) {
    for (size_t count : kCounts) {
      for (const Shape& shape : kShapes) {
        for (bool inPlace : {false, true}) {
          check({coll, n, count, shape, 0, inPlace});
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST_P(RingCollectivesModel, AllReduceInPlace) {
  const int n = GetParam();
  for (size_t count : kCounts) {
    for (const Shape& shape : kShapes) {
      check({Collective::kAllReduce, n, count, shape, 0, true});
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST_P(RingCollectivesModel, BroadcastAndReduceFromEveryRoot) {
  const int n = GetParam();
  for (Collective coll : {Collective::kBroadcast, Collective::kReduce}) {
    for (int root : rootsFor(n)) {
      for (size_t count : kCounts) {
        for (const Shape& shape : kShapes) {
          for (bool inPlace : {false, true}) {
            check({coll, n, count, shape, root, inPlace});
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks1To16, RingCollectivesModel, ::testing::Range(1, 17));

const Collective kAll[] = {Collective::kAllReduce, Collective::kReduceScatter,
                           Collective::kAllGather, Collective::kBroadcast, Collective::kReduce};

TEST(RingCollectives, AnyRingOrderWorks) {
  const std::vector<int> order = {3, 0, 6, 4, 1, 5, 2};
  for (Collective coll : kAll) {
    for (int root : {0, 3, 2}) {
      for (bool inPlace : {false, true}) {
        check({coll, 7, 503, {7, 3, 2}, root, inPlace, order});
      }
    }
  }
}

// Each channel on a ring of its own (the planner's rings across hosts): every
// collective still gives every rank its result, from every root, and each
// channel's steps talk only to that channel's ring neighbours.
TEST(RingCollectives, EachChannelMayFollowItsOwnRing) {
  const std::vector<std::vector<int>> orders = {
      {0, 1, 2, 3, 4, 5}, {3, 4, 5, 0, 1, 2}, {1, 0, 3, 2, 5, 4}};
  for (Collective coll : kAll) {
    for (int root : {0, 4}) {
      for (bool inPlace : {false, true}) {
        // Four channels over three rings: the fourth follows the first again.
        check({coll, 6, 1001, {9, 4, 4}, root, inPlace, {}, orders});
      }
    }
  }
  for (int rank = 0; rank < 6; ++rank) {
    Call c{Collective::kAllReduce, 6, 1001, {9, 4, 4}};
    c.channelOrders = orders;
    auto s = generate(c, rank);
    ASSERT_TRUE(s.ok()) << s.status().message();
    for (int ch = 0; ch < 4; ++ch) {
      const std::vector<int>& ring = orders[ch % 3];
      EXPECT_EQ(s.value().channels[ch].ring, ring);
      const int pos = static_cast<int>(std::find(ring.begin(), ring.end(), rank) - ring.begin());
      for (const Step& step : s.value().channels[ch].steps) {
        if (step.recvPeer >= 0) {
          EXPECT_EQ(step.recvPeer, ring[(pos + 5) % 6]) << "channel " << ch;
        }
        if (step.sendPeer >= 0) {
          EXPECT_EQ(step.sendPeer, ring[(pos + 1) % 6]) << "channel " << ch;
        }
      }
    }
  }
}

// For every connection of every channel, the messages one end sends are the
// messages the other end receives, in the same order and of the same sizes,
// and only ring neighbours talk.
TEST(RingCollectives, MessagesBalanceBetweenNeighbours) {
  for (Collective coll : kAll) {
    for (int n : {1, 2, 3, 5, 8, 13}) {
      for (size_t count : {size_t(0), size_t(7), size_t(1000)}) {
        Call c{coll, n, count, {16, 5, 3}, n / 2};
        SCOPED_TRACE(describe(c));
        std::vector<Schedule> all;
        for (int r = 0; r < n; ++r) {
          auto s = generate(c, r);
          ASSERT_TRUE(s.ok()) << s.status().message();
          all.push_back(std::move(s).value());
        }
        for (int r = 0; r < n; ++r) {
          const int next = (r + 1) % n;
          for (size_t ch = 0; ch < all[r].channels.size(); ++ch) {
            std::vector<size_t> sent, received;
            for (const Step& st : all[r].channels[ch].steps) {
              if (st.count == 0) continue;
              if (stepSends(st.op)) {
                ASSERT_EQ(st.sendPeer, next);
                sent.push_back(st.count);
              }
            }
            for (const Step& st : all[next].channels[ch].steps) {
              if (st.count == 0) continue;
              if (stepReceives(st.op)) {
                ASSERT_EQ(st.recvPeer, r);
                received.push_back(st.count);
              }
            }
            EXPECT_EQ(sent, received) << "rank " << r << " to " << next << " channel " << ch;
          }
        }
      }
    }
  }
}

// What each rank sends in all, summed over its messages: the ring's
// bandwidth-optimal volumes, and nothing from the end of a chain.
TEST(RingCollectives, EachRankSendsTheOptimalVolume) {
  const int n = 6;
  const int root = 2;
  const size_t count = 1000;
  for (Collective coll : {Collective::kReduceScatter, Collective::kAllGather,
                          Collective::kBroadcast, Collective::kReduce}) {
    for (int r = 0; r < n; ++r) {
      auto s = generate({coll, n, count, {16, 5, 2}, root}, r);
      ASSERT_TRUE(s.ok()) << s.status().message();
      size_t sent = 0;
      for (const auto& ch : s.value().channels) {
        for (const Step& st : ch.steps) sent += stepSends(st.op) ? st.count : 0;
      }
      size_t want = (n - 1) * count;
      if (coll == Collective::kBroadcast) want = r == root - 1 ? 0 : count;  // ends the chain
      if (coll == Collective::kReduce) want = r == root ? 0 : count;         // ends the chain
      EXPECT_EQ(sent, want) << collectiveName(coll) << " rank " << r;
    }
  }
}

// A message of a cyclic ring round must fit in half the FIFO (see
// ring_common.h); chains may use any size but get the same cut.
TEST(RingCollectives, MessagesTakeAtMostHalfTheFifo) {
  for (Collective coll : kAll) {
    for (const Shape& shape : kShapes) {
      Call c{coll, 5, 4099, shape, 1};
      for (int r = 0; r < 5; ++r) {
        auto s = generate(c, r);
        ASSERT_TRUE(s.ok()) << s.status().message();
        const size_t slice = s.value().sliceElems;
        ASSERT_GT(slice, 0u);
        for (const auto& ch : s.value().channels) {
          for (const Step& st : ch.steps) {
            EXPECT_LE((st.count + slice - 1) / slice, kMaxSlicesPerMessage)
                << describe(c) << " rank " << r;
          }
        }
      }
    }
  }
}

RingParams paramsFor(int nranks, int rank, size_t count) {
  RingParams p;
  p.nranks = nranks;
  p.rank = rank;
  p.count = count;
  p.chunkElems = 100;
  p.maxSliceElems = 100;
  return p;
}

TEST(RingReduceScatter, StepsFollowTheTextbookPattern) {
  auto s = ringReduceScatter(paramsFor(4, 1, 100));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.value().collective, Collective::kReduceScatter);
  const auto& steps = s.value().channels[0].steps;
  ASSERT_EQ(steps.size(), 4u);  // N steps a round
  EXPECT_EQ(steps[0].op, StepOp::kSend);
  EXPECT_EQ(steps[0].chunk, 0);  // the block of the previous rank starts here
  EXPECT_EQ(steps[0].inOffset, 0u);
  EXPECT_EQ(steps[0].sendPeer, 2);
  EXPECT_EQ(steps[1].op, StepOp::kRecvReduceSend);
  EXPECT_EQ(steps[1].chunk, 3);
  EXPECT_EQ(steps[1].inOffset, 300u);
  EXPECT_EQ(steps[1].recvPeer, 0);
  EXPECT_EQ(steps[3].op, StepOp::kRecvReduceCopy);
  EXPECT_EQ(steps[3].chunk, 1);  // its own block arrives last
  EXPECT_EQ(steps[3].inOffset, 100u);
  EXPECT_EQ(steps[3].outOffset, 0u);
  EXPECT_EQ(steps[3].sendPeer, -1);
}

TEST(RingAllGather, StepsFollowTheTextbookPattern) {
  auto s = ringAllGather(paramsFor(4, 1, 100));
  ASSERT_TRUE(s.ok());
  const auto& steps = s.value().channels[0].steps;
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[0].op, StepOp::kCopySend);
  EXPECT_EQ(steps[0].inOffset, 0u);
  EXPECT_EQ(steps[0].outOffset, 100u);  // its own block
  EXPECT_EQ(steps[1].op, StepOp::kRecvCopySend);
  EXPECT_EQ(steps[1].outOffset, 0u);  // rank 0's block, from rank 0
  EXPECT_EQ(steps[3].op, StepOp::kRecv);
  EXPECT_EQ(steps[3].outOffset, 200u);  // rank 2's block, the last to arrive
  EXPECT_EQ(steps[3].sendPeer, -1);
}

TEST(RingBroadcastAndReduce, ChainsStartAndEndAtTheRoot) {
  const int n = 5;
  const int root = 3;
  const StepOp bcast[] = {StepOp::kRecvCopySend, StepOp::kRecvCopySend, StepOp::kRecv,
                          StepOp::kCopySend, StepOp::kRecvCopySend};
  const StepOp reduce[] = {StepOp::kRecvReduceSend, StepOp::kRecvReduceSend,
                           StepOp::kRecvReduceSend, StepOp::kRecvReduceCopy, StepOp::kSend};
  for (int r = 0; r < n; ++r) {
    auto b = ringBroadcast(paramsFor(n, r, 250), root);
    auto d = ringReduce(paramsFor(n, r, 250), root);
    ASSERT_TRUE(b.ok() && d.ok());
    EXPECT_EQ(b.value().root, root);
    ASSERT_EQ(b.value().channels[0].steps.size(), 3u);  // chunks of 100, 100, 50
    ASSERT_EQ(d.value().channels[0].steps.size(), 3u);
    EXPECT_EQ(b.value().channels[0].steps[2].count, 50u);
    for (const Step& st : b.value().channels[0].steps) EXPECT_EQ(st.op, bcast[r]) << r;
    for (const Step& st : d.value().channels[0].steps) EXPECT_EQ(st.op, reduce[r]) << r;
  }
}

TEST(RingCollectives, BadParametersAreRejected) {
  RingParams p = paramsFor(3, 0, 10);
  EXPECT_EQ(ringBroadcast(p, 3).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ringBroadcast(p, -1).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ringReduce(p, 3).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(ringReduce(p, 7).status().message().find("root 7"), std::string::npos);
  p.count = SIZE_MAX / 2;
  EXPECT_EQ(ringReduceScatter(p).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ringAllGather(p).status().code(), ErrorCode::kInvalidArgument);
  p.count = 10;
  p.rank = 3;
  EXPECT_EQ(ringReduceScatter(p).status().code(), ErrorCode::kInvalidArgument);
  p.rank = 0;
  p.order = {0, 2, 2};
  EXPECT_EQ(ringAllGather(p).status().code(), ErrorCode::kInvalidArgument);
  p.order = {};
  p.channelOrders = {{0, 1, 2}, {0, 1}};
  EXPECT_NE(ringAllReduce(p).status().message().find("channel order 1 has 2 ranks"),
            std::string::npos)
      << ringAllReduce(p).status().message();
  p.channelOrders = {{}};
  EXPECT_EQ(ringAllReduce(p).status().code(), ErrorCode::kInvalidArgument);
  p.channelOrders = {};
  p.nchannels = 0;
  EXPECT_EQ(ringBroadcast(p, 0).status().code(), ErrorCode::kInvalidArgument);
  p.nchannels = 1;
  p.maxSliceElems = 0;
  EXPECT_EQ(ringReduce(p, 0).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ScheduleDump, NamesInputAndOutputRangesApartForGathers) {
  auto s = ringReduceScatter(paramsFor(2, 0, 10));
  ASSERT_TRUE(s.ok());
  std::string text = formatSchedule(s.value(), DataType::kFloat32);
  EXPECT_NE(text.find("ReduceScatter of 10"), std::string::npos) << text;
  EXPECT_NE(text.find("send                chunk 1   in [10, 20) to 1"), std::string::npos) << text;
  EXPECT_NE(text.find("in [0, 10) out [0, 10)"), std::string::npos) << text;
  auto b = ringBroadcast(paramsFor(2, 0, 10), 1);
  ASSERT_TRUE(b.ok());
  text = formatSchedule(b.value(), DataType::kFloat32);
  EXPECT_NE(text.find("root: 1"), std::string::npos) << text;
  EXPECT_NE(text.find("recv                chunk 0   elements [0, 10) from 1"), std::string::npos)
      << text;
}

// The model itself: it must see deadlocks, aliasing and protocol slips, or
// the tests above prove nothing.
Schedule handMade(int rank, int nranks, size_t slice, std::vector<Step> steps) {
  Schedule s;
  s.rank = rank;
  s.nranks = nranks;
  s.sliceElems = slice;
  s.channels.resize(1);
  s.channels[0].steps = std::move(steps);
  return s;
}

std::vector<ModelRank> twoRanks(std::vector<Step> steps0, std::vector<Step> steps1,
                                size_t slice0 = 1, size_t slice1 = 1) {
  std::vector<ModelRank> ranks(2);
  ranks[0].schedule = handMade(0, 2, slice0, std::move(steps0));
  ranks[1].schedule = handMade(1, 2, slice1, std::move(steps1));
  for (auto& r : ranks) r.layOut(64, 0, 32, 32, 32, ModelValue{});
  return ranks;
}

TEST(ScheduleModel, AFullFifoBlocksTheSender) {
  const size_t slots = transport::kFifoSlots;
  // Both send first, then receive: fine while a message fits in the FIFO.
  auto fits =
      twoRanks({{StepOp::kSend, -1, 1, 0, 0, 0, slots}, {StepOp::kRecv, 1, -1, 0, 0, 0, slots}},
               {{StepOp::kSend, -1, 0, 0, 0, 0, slots}, {StepOp::kRecv, 0, -1, 0, 0, 0, slots}});
  EXPECT_TRUE(testing::runModel(fits).ok());
  auto stuck = twoRanks(
      {{StepOp::kSend, -1, 1, 0, 0, 0, slots + 1}, {StepOp::kRecv, 1, -1, 0, 0, 0, slots + 1}},
      {{StepOp::kSend, -1, 0, 0, 0, 0, slots + 1}, {StepOp::kRecv, 0, -1, 0, 0, 0, slots + 1}});
  Status st = testing::runModel(stuck);
  EXPECT_NE(st.message().find("deadlock"), std::string::npos) << st.message();
}

TEST(ScheduleModel, CatchesProtocolSlips) {
  auto sizes =
      twoRanks({{StepOp::kSend, -1, 1, 0, 0, 0, 4}}, {{StepOp::kRecv, 0, -1, 0, 0, 0, 4}}, 4, 2);
  EXPECT_NE(testing::runModel(sizes).message().find("slice"), std::string::npos);
  auto unreceived = twoRanks({{StepOp::kSend, -1, 1, 0, 0, 0, 4}}, {});
  EXPECT_NE(testing::runModel(unreceived).message().find("never received"), std::string::npos);
  auto outside = twoRanks({{StepOp::kCopy, -1, -1, 0, 30, 0, 4}}, {});
  EXPECT_NE(testing::runModel(outside).message().find("past the input"), std::string::npos);
}

TEST(ScheduleModel, WritesThroughTheAliasAreSeen) {
  // Swap the halves of a 4-element buffer: right out of place, wrong in place,
  // because the second copy reads what the first one wrote.
  std::vector<Step> swap = {{StepOp::kCopy, -1, -1, 0, 0, 2, 2},
                            {StepOp::kCopy, -1, -1, 0, 2, 0, 2}};
  for (bool inPlace : {false, true}) {
    std::vector<ModelRank> ranks(1);
    ranks[0].schedule = handMade(0, 1, 1, swap);
    if (inPlace) {
      ranks[0].layOut(4, 0, 4, 0, 4, ModelValue{});
    } else {
      ranks[0].layOut(8, 0, 4, 4, 4, ModelValue{});
    }
    for (size_t i = 0; i < 4; ++i) ranks[0].input()[i] = testing::modelCopied(0, i);
    ASSERT_TRUE(testing::runModel(ranks).ok());
    const std::vector<ModelValue> out = ranks[0].output();
    const size_t want[] = {inPlace ? 0u : 2u, inPlace ? 1u : 3u, 0, 1};
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(out[i], testing::modelCopied(0, want[i])) << i;
  }
}

}  // namespace
}  // namespace braid::algo
