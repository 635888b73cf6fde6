// Compression loses nothing: every generator's schedule walks back, step by
// step, from its runs; and it saves what it should at scale.
#include <gtest/gtest.h>

#include "agent_cursor.h"
#include "generate.h"
#include "interval_memory.h"

namespace braid::sim {
namespace {

bool sameStep(const algo::Step& a, const algo::Step& b) {
  return a.op == b.op && a.recvPeer == b.recvPeer && a.sendPeer == b.sendPeer &&
         a.inOffset == b.inOffset && a.outOffset == b.outOffset && a.count == b.count &&
         a.fromOutput == b.fromOutput;
}

TEST(CompactSchedule, RoundTripsEveryGenerator) {
  const Collective kAll[] = {Collective::kAllReduce, Collective::kReduceScatter,
                             Collective::kAllGather, Collective::kBroadcast, Collective::kReduce};
  for (algo::Algorithm a : {algo::Algorithm::kRing, algo::Algorithm::kTree}) {
    for (Collective c : kAll) {
      if (!checkSupported(c, a).ok()) continue;
      for (int n : {1, 2, 5, 16, 33}) {
        ScheduleSpec spec;
        spec.collective = c;
        spec.algorithm = a;
        spec.nranks = n;
        spec.count = 1000;
        spec.chunkElems = 7;
        spec.maxSliceElems = 3;
        spec.nchannels = 2;
        for (int r = 0; r < n; ++r) {
          algo::Schedule s = generateRank(spec, r).value();
          const CompressedRank packed = compressSchedule(s);
          ASSERT_EQ(packed.channels.size(), s.channels.size());
          for (size_t ch = 0; ch < s.channels.size(); ++ch) {
            const AgentSchedule& agent = packed.channels[ch];
            uint64_t i = 0;
            for (const StepRun& run : agent.runs) {
              for (uint32_t rep = 0; rep < run.repeats; ++rep) {
                for (uint32_t p = 0; p < run.period; ++p, ++i) {
                  ASSERT_LT(i, s.channels[ch].steps.size());
                  ASSERT_TRUE(sameStep(agent.stepAt(run, rep, p), s.channels[ch].steps[i]))
                      << "rank " << r << " channel " << ch << " step " << i;
                }
              }
            }
            EXPECT_EQ(i, s.channels[ch].steps.size());
          }
        }
      }
    }
  }
}

TEST(CompactSchedule, RingAndTreeCompressAtScale) {
  for (algo::Algorithm a : {algo::Algorithm::kRing, algo::Algorithm::kTree}) {
    ScheduleSpec spec;
    spec.algorithm = a;
    spec.nranks = 1024;
    spec.count = 1 << 20;
    spec.chunkElems = 1 << 10;
    spec.maxSliceElems = 1 << 8;
    Result<ScheduleSet> set = generateSchedules(spec, 2);
    ASSERT_TRUE(set.ok()) << set.status().message();
    uint64_t runs = 0;
    for (const AgentSchedule& agent : set.value().agents) runs += agent.runs.size();
    // A ring rank: about ten runs per round; a tree rank: a few runs per phase.
    EXPECT_LT(runs * 50, set.value().steps) << "runs " << runs;
  }
}

TEST(IntervalMemory, WritesMergeAndSplit) {
  IntervalMemory m;
  m.reset(100, Piece{});
  const Contributions a{1, 10, 20};
  const Contributions b{1, 11, 21};
  Value v;
  v.push_back(Piece{10, 40, a});
  m.write(40, v);  // [40, 50) holds elements 40.. of a
  EXPECT_EQ(m.intervals(), 3u);
  v.clear();
  v.push_back(Piece{10, 30, a});
  m.write(30, v);  // continues it to the left: one interval [30, 50)
  EXPECT_EQ(m.intervals(), 3u);
  v.clear();
  v.push_back(Piece{5, 50, a});
  m.write(50, v);  // and to the right
  EXPECT_EQ(m.intervals(), 3u);
  Value out;
  m.read(28, 30, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].who.unwritten());
  EXPECT_EQ(out[1].len, 25u);
  EXPECT_EQ(out[1].src, 30u);
  EXPECT_TRUE(out[2].who.unwritten());
  v.clear();
  v.push_back(Piece{2, 0, b});  // another value in the middle splits it
  m.write(35, v);
  EXPECT_EQ(m.intervals(), 5u);
  out.clear();
  m.read(34, 4, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].src, 34u);
  EXPECT_EQ(out[1].who, b);
  EXPECT_EQ(out[2].src, 37u);
}

TEST(IntervalMemory, ValuesSpillPastTwoPieces) {
  Value v;
  for (uint64_t i = 0; i < 5; ++i) v.push_back(Piece{1, i * 7, Contributions{1, i, i}});
  ASSERT_EQ(v.size(), 5u);
  Value copy = v;
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(copy[i].src, i * 7);
  copy.clear();
  copy.push_back(v[4]);
  EXPECT_EQ(copy.size(), 1u);
  EXPECT_EQ(copy[0].src, 28u);
}

}  // namespace
}  // namespace braid::sim
