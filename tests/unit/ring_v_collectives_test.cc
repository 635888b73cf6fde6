// The variable-count forms of the ring reduce-scatter and all-gather
// generators (RingParams::blockCounts / blockOffsets, behind
// braidReduceScatterV and braidAllGatherV), checked symbolically on braid-sim's
// model of schedules on FIFOs (tools/sim/symbolic_check.h) like their uniform
// forms in ring_collectives_test.cc: every rank's schedule runs together (a
// deadlock fails), out of place and in place, and every output element is
// checked, the gaps between blocks included (they must stay unwritten).
//
// The counts are random (zeros included) and adversarial: one huge block
// among tiny ones, all zero, a single element; the blocks lie in rank order
// without gaps, or in a shuffled order with gaps between them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "algo/ring.h"
#include "algo/ring_common.h"
#include "symbolic_check.h"

namespace braid::algo::ring_v_collectives_test {
namespace {

struct Shape {
  size_t chunk;
  size_t slice;
  int channels;
  size_t minSlice = 1;
};

// As in ring_collectives_test.cc: one round of one slice; many rounds of
// several slices; chunks cut to half the FIFO; several channels.
const Shape kShapes[] = {
    {1 << 20, 1 << 18, 1}, {16, 5, 1}, {64, 2, 1}, {9, 2, 2}, {40, 3, 3}, {1 << 20, 7, 2, 4},
};

struct Blocks {
  std::string name;
  std::vector<size_t> counts;
  std::vector<size_t> offsets;
};

size_t extent(const Blocks& b) {
  size_t end = 0;
  for (size_t i = 0; i < b.counts.size(); ++i) end = std::max(end, b.offsets[i] + b.counts[i]);
  return end;
}

enum class Pattern { kRandom, kOneHuge, kAllZero, kOneElement, kGrowing };
const Pattern kPatterns[] = {Pattern::kRandom, Pattern::kOneHuge, Pattern::kAllZero,
                             Pattern::kOneElement, Pattern::kGrowing};
const char* patternName(Pattern p) {
  switch (p) {
    case Pattern::kRandom:
      return "random";
    case Pattern::kOneHuge:
      return "one huge";
    case Pattern::kAllZero:
      return "all zero";
    case Pattern::kOneElement:
      return "one element";
    case Pattern::kGrowing:
      return "growing";
  }
  return "?";
}

// Counts of `pattern` for n ranks; `gaps`: blocks in shuffled order with
// gaps between them, else in rank order back to back.
Blocks makeBlocks(int n, Pattern pattern, bool gaps, uint32_t seed) {
  std::mt19937 rng(seed);
  Blocks b;
  b.name = std::string(patternName(pattern)) + (gaps ? ", shuffled with gaps" : ", packed");
  b.counts.assign(n, 0);
  for (int r = 0; r < n; ++r) {
    switch (pattern) {
      case Pattern::kRandom:
        b.counts[r] = rng() % 4 == 0 ? 0 : rng() % 90;
        break;
      case Pattern::kOneHuge:
        b.counts[r] = rng() % 4;
        break;
      case Pattern::kAllZero:
        break;
      case Pattern::kOneElement:
        b.counts[r] = r == n / 2 ? 1 : 0;
        break;
      case Pattern::kGrowing:
        b.counts[r] = 23 * r;
        break;
    }
  }
  if (pattern == Pattern::kOneHuge) b.counts[rng() % n] = 2500;
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (gaps) std::shuffle(order.begin(), order.end(), rng);
  b.offsets.assign(n, 0);
  size_t at = gaps ? rng() % 5 : 0;
  for (int r : order) {
    b.offsets[r] = at;
    at += b.counts[r] + (gaps ? rng() % 7 : 0);
  }
  return b;
}

struct Call {
  Collective collective;  // kReduceScatter or kAllGather
  int nranks;
  Blocks blocks;
  Shape shape;
  bool inPlace = false;
  std::vector<int> order = {};
};

std::string describe(const Call& c) {
  return std::string(collectiveName(c.collective)) + "V nranks " + std::to_string(c.nranks) +
         " blocks " + c.blocks.name + " chunk " + std::to_string(c.shape.chunk) + " slice " +
         std::to_string(c.shape.slice) + " channels " + std::to_string(c.shape.channels) +
         (c.inPlace ? " in place" : " out of place");
}

RingParams paramsOf(const Call& c, int rank) {
  RingParams p;
  p.nranks = c.nranks;
  p.rank = rank;
  p.order = c.order;
  p.chunkElems = c.shape.chunk;
  p.maxSliceElems = c.shape.slice;
  p.minSliceElems = c.shape.minSlice;
  p.nchannels = c.shape.channels;
  p.blockCounts = c.blocks.counts;
  p.blockOffsets = c.blocks.offsets;
  return p;
}

Result<Schedule> generate(const Call& c, int rank) {
  const RingParams p = paramsOf(c, rank);
  return c.collective == Collective::kAllGather ? ringAllGather(p) : ringReduceScatter(p);
}

// Rank r's buffers, in place as braid_ext.h defines it. The model fills the
// input with the rank's own contribution, the gaps of a big input too (they
// must not be read), and leaves the rest of the memory unwritten.
sim::BufferLayout layout(const Call& c, int r) {
  const size_t big = extent(c.blocks);
  const size_t mine = c.blocks.counts[r];
  const size_t at = c.blocks.offsets[r];
  if (c.collective == Collective::kAllGather) {
    return c.inPlace ? sim::oneBuffer(big, at, mine, 0, big)  // send = recv + offsets[r]
                     : sim::separateBuffers(mine, big);
  }
  return c.inPlace ? sim::oneBuffer(big, 0, big, at, mine)  // recv = send + offsets[r]
                   : sim::separateBuffers(big, mine);
}

// What rank r's output must hold: for reduce-scatter, every contribution to
// its block; for all-gather, each rank's block at its offset and nothing in
// the gaps (in place, this rank's input is in its own block, so a gap is
// still unwritten).
sim::Value expected(const Call& c, int r, const sim::RankKeys& keys) {
  const Blocks& b = c.blocks;
  sim::Value v;
  if (c.collective == Collective::kReduceScatter) {
    sim::appendPiece(v, {b.counts[r], b.offsets[r], keys.all()});
    return v;
  }
  std::vector<int> byOffset(c.nranks);
  std::iota(byOffset.begin(), byOffset.end(), 0);
  // (Empty blocks may share an offset with another block; they add nothing.)
  std::sort(byOffset.begin(), byOffset.end(),
            [&b](int x, int y) { return b.offsets[x] < b.offsets[y]; });
  uint64_t at = 0;
  for (int q : byOffset) {
    if (b.counts[q] == 0) continue;
    sim::appendPiece(v, {b.offsets[q] - at, 0, sim::Contributions{}});
    sim::appendPiece(v, {b.counts[q], 0, keys.single(q)});
    at = b.offsets[q] + b.counts[q];
  }
  sim::appendPiece(v, {extent(b) - at, 0, sim::Contributions{}});  // a gap after the last block
  return v;
}

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

class RingVCollectivesModel : public ::testing::TestWithParam<int> {};

TEST_P(RingVCollectivesModel, ReduceScatterVAndAllGatherV) {
  const int n = GetParam();
  uint32_t seed = 1000 * n;
  for (Pattern pattern : kPatterns) {
    for (bool gaps : {false, true}) {
      const Blocks blocks = makeBlocks(n, pattern, gaps, ++seed);
      for (Collective coll : {Collective::kReduceScatter, Collective::kAllGather}) {
        for (const Shape& shape : kShapes) {
          for (bool inPlace : {false, true}) {
            check({coll, n, blocks, shape, inPlace});
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks1To16, RingVCollectivesModel, ::testing::Range(1, 17));

TEST(RingVCollectives, AnyRingOrderWorks) {
  const std::vector<int> order = {3, 0, 6, 4, 1, 5, 2};
  for (Pattern pattern : kPatterns) {
    const Blocks blocks = makeBlocks(7, pattern, true, 77);
    for (Collective coll : {Collective::kReduceScatter, Collective::kAllGather}) {
      for (bool inPlace : {false, true}) check({coll, 7, blocks, {7, 3, 2}, inPlace, order});
    }
  }
}

// Equal counts at b * count give exactly the uniform schedule: the variable
// form is a generalisation, not a second algorithm.
TEST(RingVCollectives, EqualBlocksGiveTheUniformSchedule) {
  for (int n : {1, 2, 5, 8}) {
    for (size_t count : {size_t(0), size_t(7), size_t(1000)}) {
      for (const Shape& shape : kShapes) {
        for (int rank = 0; rank < n; ++rank) {
          RingParams u;
          u.nranks = n;
          u.rank = rank;
          u.count = count;
          u.chunkElems = shape.chunk;
          u.maxSliceElems = shape.slice;
          u.minSliceElems = shape.minSlice;
          u.nchannels = shape.channels;
          RingParams v = u;
          v.count = 12345;  // ignored with blocks
          for (int b = 0; b < n; ++b) {
            v.blockCounts.push_back(count);
            v.blockOffsets.push_back(b * count);
          }
          for (bool gather : {false, true}) {
            auto a = gather ? ringAllGather(u) : ringReduceScatter(u);
            auto b = gather ? ringAllGather(v) : ringReduceScatter(v);
            ASSERT_TRUE(a.ok() && b.ok());
            EXPECT_EQ(formatSchedule(a.value(), DataType::kInt8),
                      formatSchedule(b.value(), DataType::kInt8))
                << "n " << n << " count " << count << " rank " << rank;
          }
        }
      }
    }
  }
}

// Messages: at most half the FIFO each, the same sequence at both ends of a
// connection, between ring neighbours only, and no empty ones.
TEST(RingVCollectives, MessagesFitAndBalanceBetweenNeighbours) {
  for (int n : {2, 3, 5, 8, 13}) {
    for (Pattern pattern : kPatterns) {
      const Blocks blocks = makeBlocks(n, pattern, true, 5 * n);
      for (Collective coll : {Collective::kReduceScatter, Collective::kAllGather}) {
        for (const Shape& shape : kShapes) {
          Call c{coll, n, blocks, shape};
          SCOPED_TRACE(describe(c));
          std::vector<Schedule> all;
          for (int r = 0; r < n; ++r) {
            auto s = generate(c, r);
            ASSERT_TRUE(s.ok()) << s.status().message();
            all.push_back(std::move(s).value());
          }
          for (int r = 0; r < n; ++r) {
            const int next = (r + 1) % n;
            const size_t slice = all[r].sliceElems;
            ASSERT_EQ(slice, all[next].sliceElems);
            for (size_t ch = 0; ch < all[r].channels.size(); ++ch) {
              std::vector<size_t> sent, received;
              for (const Step& st : all[r].channels[ch].steps) {
                ASSERT_GT(st.count, 0u);
                ASSERT_LE((st.count + slice - 1) / slice, kMaxSlicesPerMessage);
                if (stepSends(st.op)) {
                  ASSERT_EQ(st.sendPeer, next);
                  sent.push_back(st.count);
                }
              }
              for (const Step& st : all[next].channels[ch].steps) {
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
}

// Each rank sends every block once but one: all-gather all but the block of
// the rank after it (the last to arrive), reduce-scatter all but its own.
TEST(RingVCollectives, EachRankSendsTheOptimalVolume) {
  const int n = 6;
  const Blocks blocks = makeBlocks(n, Pattern::kRandom, true, 3);
  const size_t total = std::accumulate(blocks.counts.begin(), blocks.counts.end(), size_t{0});
  for (Collective coll : {Collective::kReduceScatter, Collective::kAllGather}) {
    for (int r = 0; r < n; ++r) {
      auto s = generate({coll, n, blocks, {16, 5, 2}}, r);
      ASSERT_TRUE(s.ok()) << s.status().message();
      size_t sent = 0;
      for (const auto& ch : s.value().channels) {
        for (const Step& st : ch.steps) sent += stepSends(st.op) ? st.count : 0;
      }
      const int skipped = coll == Collective::kAllGather ? (r + 1) % n : r;
      EXPECT_EQ(sent, total - blocks.counts[skipped]) << collectiveName(coll) << " rank " << r;
    }
  }
}

TEST(RingVCollectives, StepsSkipEmptyBlocksAndUseTheOffsets) {
  // Rank 1 of 3: block 0 empty, block 1 = 5 elements at 10, block 2 = 2 at 0.
  RingParams p;
  p.nranks = 3;
  p.rank = 1;
  p.chunkElems = 100;
  p.maxSliceElems = 100;
  p.blockCounts = {0, 5, 2};
  p.blockOffsets = {4, 10, 0};
  auto g = ringAllGather(p);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g.value().count, 5u);
  const auto& gs = g.value().channels[0].steps;
  ASSERT_EQ(gs.size(), 2u);  // own block, then block 2; block 0 (from rank 0) is empty
  EXPECT_EQ(gs[0].op, StepOp::kCopySend);
  EXPECT_EQ(gs[0].inOffset, 0u);
  EXPECT_EQ(gs[0].outOffset, 10u);
  EXPECT_EQ(gs[1].op, StepOp::kRecv);
  EXPECT_EQ(gs[1].chunk, 2);
  EXPECT_EQ(gs[1].outOffset, 0u);
  EXPECT_EQ(gs[1].count, 2u);
  auto r = ringReduceScatter(p);
  ASSERT_TRUE(r.ok());
  const auto& rs = r.value().channels[0].steps;
  ASSERT_EQ(rs.size(), 2u);  // block 0 starts here but is empty
  EXPECT_EQ(rs[0].op, StepOp::kRecvReduceSend);
  EXPECT_EQ(rs[0].chunk, 2);
  EXPECT_EQ(rs[0].inOffset, 0u);
  EXPECT_EQ(rs[1].op, StepOp::kRecvReduceCopy);
  EXPECT_EQ(rs[1].inOffset, 10u);
  EXPECT_EQ(rs[1].outOffset, 0u);
  EXPECT_EQ(rs[1].count, 5u);
}

TEST(RingVCollectives, BadBlocksAreRejected) {
  RingParams p;
  p.nranks = 3;
  p.blockCounts = {1, 2};
  p.blockOffsets = {0, 1, 3};
  auto a = ringAllGather(p);
  EXPECT_EQ(a.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("3 counts and offsets"), std::string::npos)
      << a.status().message();
  p.blockCounts = {1, 2, SIZE_MAX};
  auto b = ringReduceScatter(p);
  EXPECT_EQ(b.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(b.status().message().find("block 2"), std::string::npos) << b.status().message();
}

}  // namespace
}  // namespace braid::algo::ring_v_collectives_test
