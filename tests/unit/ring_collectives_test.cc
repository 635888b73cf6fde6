// The ring generators for reduce-scatter, all-gather, broadcast and reduce
// (and all-reduce in place), checked symbolically on braid-sim's model of
// schedules on FIFOs (tools/sim/symbolic_check.h): every rank's schedule runs
// together (a deadlock fails), out of place and in place with the buffers
// aliased as NCCL's rules say, and every rank's output is checked exactly.
// A value says which element of whose contributions it holds, counting each
// contribution (so one counted twice or missed shows), and reducing two
// different elements is an error of its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "algo/ring.h"
#include "algo/ring_common.h"
#include "symbolic_check.h"
#include "transport/connection.h"

namespace braid::algo {
namespace {

static_assert(kFifoSlotsAssumed == static_cast<size_t>(transport::kFifoSlots),
              "ring schedules are sized for a different FIFO than the transports have");

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

// Rank r's buffers, with NCCL's in-place aliasing where asked. The model
// fills the input with the rank's own contribution, element by element, and
// leaves the rest of the memory unwritten: a broadcast's non-root input holds
// that rank's values, which would show in an output that read them.
sim::BufferLayout layout(const Call& c, int r) {
  const size_t n = c.nranks;
  const size_t count = c.count;
  const size_t inLen = c.collective == Collective::kReduceScatter ? n * count : count;
  const size_t outLen = c.collective == Collective::kAllGather ? n * count : count;
  if (!c.inPlace) return sim::separateBuffers(inLen, outLen);
  if (c.collective == Collective::kAllGather) {
    return sim::oneBuffer(outLen, r * count, inLen, 0, outLen);  // send = recv + r*count
  }
  if (c.collective == Collective::kReduceScatter) {
    return sim::oneBuffer(inLen, 0, inLen, r * count, outLen);  // recv = send + r*count
  }
  return sim::oneBuffer(count, 0, inLen, 0, outLen);  // send = recv
}

// What rank r's output must hold at the end, element by element.
sim::Value expected(const Call& c, int r, const sim::RankKeys& keys) {
  const uint64_t count = c.count;
  sim::Value v;
  switch (c.collective) {
    case Collective::kAllReduce:
      sim::appendPiece(v, {count, 0, keys.all()});
      break;
    case Collective::kReduceScatter:
      sim::appendPiece(v, {count, r * count, keys.all()});
      break;
    case Collective::kAllGather:
      for (int q = 0; q < c.nranks; ++q) sim::appendPiece(v, {count, 0, keys.single(q)});
      break;
    case Collective::kBroadcast:
      sim::appendPiece(v, {count, 0, keys.single(c.root)});
      break;
    case Collective::kReduce:
      if (r == c.root) {
        sim::appendPiece(v, {count, 0, keys.all()});
      } else {
        // A non-root output is left alone: it keeps the input in place and
        // stays unwritten out of place.
        sim::appendPiece(v, {count, 0, c.inPlace ? keys.single(r) : sim::Contributions{}});
      }
      break;
  }
  return v;
}

// Runs `c` on the model and checks every rank's output element by element.
void check(const Call& c) {
  SCOPED_TRACE(describe(c));
  std::vector<Schedule> schedules;
  std::vector<sim::BufferLayout> layouts;
  for (int r = 0; r < c.nranks; ++r) {
    auto s = generate(c, r);
    ASSERT_TRUE(s.ok()) << s.status().message();
    schedules.push_back(std::move(s).value());
    layouts.push_back(layout(c, r));
  }
  auto want = [&c](int r, const sim::RankKeys& keys) {
    return std::optional<sim::Value>(expected(c, r, keys));
  };
  auto run = sim::checkOnBuffers(schedules, layouts, want);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run.value().ranksChecked, static_cast<uint64_t>(c.nranks));
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

}  // namespace
}  // namespace braid::algo
