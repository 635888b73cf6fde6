// The symbolic checker: braid's generators pass it at awkward rank counts,
// and schedules broken on purpose (a step dropped, a wrong peer, a
// contribution counted twice, elements mixed up, a cycle of waits, a FIFO
// too small for what is sent ahead) fail it with a message that says so.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "generate.h"
#include "symbolic_check.h"

namespace braid::sim::symbolic_check_test {
namespace {

using algo::Step;
using algo::StepOp;

std::vector<algo::Schedule> generateAll(const ScheduleSpec& spec) {
  std::vector<algo::Schedule> all;
  for (int r = 0; r < spec.nranks; ++r) {
    Result<algo::Schedule> s = generateRank(spec, r);
    EXPECT_TRUE(s.ok()) << s.status().message();
    all.push_back(s.value());
  }
  return all;
}

Status check(const std::vector<algo::Schedule>& schedules, bool inPlace = false) {
  Result<ScheduleSet> set = makeScheduleSet(schedules);
  if (!set.ok()) return set.status();
  CheckOptions options;
  options.inPlace = inPlace;
  Result<CheckStats> stats = checkSymbolically(set.value(), options);
  return stats.ok() ? Status::success() : stats.status();
}

ScheduleSpec spec(Collective c, algo::Algorithm a, int nranks, size_t count, size_t chunk,
                  size_t slice, int channels = 1) {
  ScheduleSpec s;
  s.collective = c;
  s.algorithm = a;
  s.nranks = nranks;
  s.count = count;
  s.chunkElems = chunk;
  s.maxSliceElems = slice;
  s.minSliceElems = 1;
  s.nchannels = channels;
  return s;
}

TEST(SymbolicCheck, RingCollectivesPassAtAwkwardSizes) {
  const Collective kAll[] = {Collective::kAllReduce, Collective::kReduceScatter,
                             Collective::kAllGather, Collective::kBroadcast, Collective::kReduce};
  for (Collective c : kAll) {
    for (int n : {1, 2, 3, 5, 8, 11, 16}) {
      for (bool inPlace : {false, true}) {
        ScheduleSpec s = spec(c, algo::Algorithm::kRing, n, 37, 5, 2, n % 3 + 1);
        s.root = n / 2;
        const Status status = check(generateAll(s), inPlace);
        EXPECT_TRUE(status.ok()) << collectiveName(c) << " n " << n << " in place " << inPlace
                                 << ": " << status.message();
      }
    }
  }
}

TEST(SymbolicCheck, TreeCollectivesPassAtAwkwardSizes) {
  for (Collective c : {Collective::kAllReduce, Collective::kBroadcast, Collective::kReduce}) {
    for (int n : {1, 2, 3, 4, 7, 8, 13, 16, 33}) {
      for (bool inPlace : {false, true}) {
        ScheduleSpec s = spec(c, algo::Algorithm::kTree, n, 61, 6, 2, n % 2 + 1);
        s.root = n - 1;
        const Status status = check(generateAll(s), inPlace);
        EXPECT_TRUE(status.ok()) << collectiveName(c) << " n " << n << " in place " << inPlace
                                 << ": " << status.message();
      }
    }
  }
}

TEST(SymbolicCheck, ThousandRanksThroughGenerateSchedules) {
  for (algo::Algorithm a : {algo::Algorithm::kRing, algo::Algorithm::kTree}) {
    Result<ScheduleSet> set =
        generateSchedules(spec(Collective::kAllReduce, a, 1000, 2999, 3, 3), 2);
    ASSERT_TRUE(set.ok()) << set.status().message();
    Result<CheckStats> stats = checkSymbolically(set.value(), CheckOptions{});
    ASSERT_TRUE(stats.ok()) << stats.status().message();
    EXPECT_EQ(stats.value().ranksChecked, 1000u);
    EXPECT_EQ(stats.value().elementsChecked, 1000u * 2999u);
  }
}

std::vector<algo::Schedule> ring8() {
  return generateAll(spec(Collective::kAllReduce, algo::Algorithm::kRing, 8, 64, 8, 2));
}

TEST(SymbolicCheck, CatchesADroppedStep) {
  auto schedules = ring8();
  auto& steps = schedules[3].channels[0].steps;
  steps.erase(steps.begin() + 4);
  const Status status = check(schedules);
  ASSERT_FALSE(status.ok());
  // Every message rank 3 sends after the gap is one step early, so it
  // reduces the chunk it receives with the wrong chunk of its own.
  EXPECT_NE(status.message().find("rank 3 step 4 (recvReduceSend of 8): at element 0 of the "
                                  "step reduces element 56 received from rank 2 with element 48"),
            std::string::npos)
      << status.message();
}

TEST(SymbolicCheck, CatchesADroppedLastReceive) {
  auto schedules = ring8();
  schedules[5].channels[0].steps.pop_back();  // the last recv of the all-gather
  const Status status = check(schedules);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("never received"), std::string::npos) << status.message();
}

TEST(SymbolicCheck, CatchesAWrongPeer) {
  auto schedules = ring8();
  for (Step& s : schedules[2].channels[0].steps) {
    if (algo::stepSends(s.op)) s.sendPeer = 5;  // rank 3 waits, rank 5 gets too much
  }
  const Status status = check(schedules);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("deadlock"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("rank 3"), std::string::npos) << status.message();
}

TEST(SymbolicCheck, CatchesAPeerOutOfRange) {
  auto schedules = ring8();
  schedules[1].channels[0].steps[0].sendPeer = 8;
  const Status status = check(schedules);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("out of range"), std::string::npos) << status.message();
}

TEST(SymbolicCheck, CatchesAContributionCountedTwice) {
  auto schedules = ring8();
  // Rank 6 adds its input again while it forwards the all-gather: the chunk
  // it passes on holds its contribution twice.
  for (Step& s : schedules[6].channels[0].steps) {
    if (s.op == StepOp::kRecvCopySend) {
      s.op = StepOp::kRecvReduceCopySend;
      break;
    }
  }
  const Status status = check(schedules);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("wrong data"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("counted twice"), std::string::npos) << status.message();
}

TEST(SymbolicCheck, CatchesElementsReducedWithOtherElements) {
  auto schedules = ring8();
  for (Step& s : schedules[4].channels[0].steps) {
    if (s.op == StepOp::kRecvReduceSend) {
      s.inOffset += 1;  // its own element i + 1 with the received element i
      break;
    }
  }
  const Status status = check(schedules);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("reduces element"), std::string::npos) << status.message();
}

TEST(SymbolicCheck, CatchesAReadPastTheInput) {
  auto schedules = ring8();
  schedules[0].channels[0].steps[0].inOffset = 60;  // 8 elements from 60 of 64
  const Status status = check(schedules);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("past its end"), std::string::npos) << status.message();
}

algo::Schedule handMade(int rank, int nranks, std::vector<Step> steps, size_t slice = 1) {
  algo::Schedule s;
  s.collective = Collective::kBroadcast;
  s.rank = rank;
  s.nranks = nranks;
  s.root = 0;
  s.count = 4;
  s.sliceElems = slice;
  s.channels.resize(1);
  s.channels[0].steps = std::move(steps);
  return s;
}

Step step(StepOp op, int recvPeer, int sendPeer, size_t count, size_t offset = 0) {
  Step s{};
  s.op = op;
  s.recvPeer = recvPeer;
  s.sendPeer = sendPeer;
  s.inOffset = offset;
  s.outOffset = offset;
  s.count = count;
  return s;
}

TEST(SymbolicCheck, ReportsACycleOfReceives) {
  // Both ranks receive first: neither ever sends.
  std::vector<algo::Schedule> s = {
      handMade(0, 2, {step(StepOp::kRecv, 1, -1, 4), step(StepOp::kSend, -1, 1, 4)}),
      handMade(1, 2, {step(StepOp::kRecv, 0, -1, 4), step(StepOp::kSend, -1, 0, 4)})};
  const Status status = check(s);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("deadlock: 2 of 2 agents"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("wait cycle: rank 0 -> rank 1 -> rank 0"), std::string::npos)
      << status.message();
}

TEST(SymbolicCheck, FifoSlotsAreBounded) {
  // Each rank sends n one-element slices before it receives any. Up to
  // kFifoSlots (8) that fits in the FIFOs; one more and both senders wait
  // for room that only the other's receive would make.
  for (size_t n : {8u, 9u}) {
    std::vector<algo::Schedule> s;
    for (int r = 0; r < 2; ++r) {
      s.push_back(handMade(
          r, 2, {step(StepOp::kCopySend, -1, 1 - r, n), step(StepOp::kRecv, 1 - r, -1, n)}));
      s.back().count = n;
      s.back().collective = Collective::kAllReduce;
    }
    const Status status = check(s);
    if (n == 8) {
      // Not a deadlock; the outputs are wrong (each rank ends with the
      // other's input), which the check reports as such.
      EXPECT_EQ(status.message().find("deadlock"), std::string::npos) << status.message();
    } else {
      EXPECT_NE(status.message().find("deadlock"), std::string::npos) << status.message();
      EXPECT_NE(status.message().find("waits for a free slot"), std::string::npos)
          << status.message();
    }
  }
}

TEST(SymbolicCheck, CatchesSlicesOfDifferentSizes) {
  std::vector<algo::Schedule> s = {handMade(0, 2, {step(StepOp::kCopySend, -1, 1, 4)}, 2),
                                   handMade(1, 2, {step(StepOp::kRecv, 0, -1, 4)}, 1)};
  const Status status = check(s);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("received a slice of 2 elements"), std::string::npos)
      << status.message();
}

TEST(SymbolicCheck, BroadcastByHandPasses) {
  std::vector<algo::Schedule> s = {handMade(0, 3, {step(StepOp::kCopySend, -1, 1, 4)}, 3),
                                   handMade(1, 3, {step(StepOp::kRecvCopySend, 0, 2, 4)}, 3),
                                   handMade(2, 3, {step(StepOp::kRecv, 1, -1, 4)}, 3)};
  const Status status = check(s);
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(SymbolicCheck, BroadcastFromTheWrongRankIsWrongData) {
  // Rank 1 forwards its own input instead of what it received.
  std::vector<algo::Schedule> s = {
      handMade(0, 3, {step(StepOp::kCopySend, -1, 1, 4)}, 4),
      handMade(1, 3, {step(StepOp::kRecv, 0, -1, 4), step(StepOp::kSend, -1, 2, 4)}, 4),
      handMade(2, 3, {step(StepOp::kRecv, 1, -1, 4)}, 4)};
  const Status status = check(s);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("rank 2: output element 0 holds element 0 of rank 1 alone, "
                                  "expected element 0 of rank 0 alone"),
            std::string::npos)
      << status.message();
}

// checkOnBuffers: the caller's buffers and expectations, as the generators'
// unit tests (tests/unit) use them.

// Element elements[i] of rank 0 at output position i (unwritten where elements[i] < 0).
Value elementsOfRank0(const RankKeys& keys, const std::vector<int>& elements) {
  Value v;
  for (int e : elements) {
    appendPiece(v, e < 0 ? Piece{1, 0, Contributions{}}
                         : Piece{1, static_cast<uint64_t>(e), keys.single(0)});
  }
  return v;
}

Status checkOne(const algo::Schedule& schedule, const BufferLayout& layout,
                const std::vector<int>& elements) {
  auto want = [&elements](int, const RankKeys& keys) {
    return std::optional<Value>(elementsOfRank0(keys, elements));
  };
  Result<CheckStats> stats = checkOnBuffers({schedule}, {layout}, want);
  return stats.ok() ? Status::success() : stats.status();
}

TEST(SymbolicCheck, WritesThroughTheAliasAreSeen) {
  // Swap the halves of a 4-element buffer: right out of place, wrong in place,
  // because the second copy reads what the first one wrote.
  const algo::Schedule swap =
      handMade(0, 1, {step(StepOp::kCopy, -1, -1, 2), step(StepOp::kCopy, -1, -1, 2)});
  algo::Schedule s = swap;
  s.channels[0].steps[0].outOffset = 2;
  s.channels[0].steps[1].inOffset = 2;
  EXPECT_TRUE(checkOne(s, separateBuffers(4, 4), {2, 3, 0, 1}).ok());
  EXPECT_TRUE(checkOne(s, oneBuffer(4, 0, 4, 0, 4), {0, 1, 0, 1}).ok());
  const Status status = checkOne(s, oneBuffer(4, 0, 4, 0, 4), {2, 3, 0, 1});
  // (One rank's contribution is every rank's: the message says so.)
  EXPECT_NE(status.message().find("output element 0 holds element 0 of every rank's contribution, "
                                  "expected element 2 of"),
            std::string::npos)
      << status.message();
}

TEST(SymbolicCheck, OnBuffersHoldsTheOutputToWhatTheCallerExpects) {
  // One copy of 2 of 4 elements: the rest of the output stays unwritten, and
  // an expectation that says otherwise, or has another length, fails.
  const algo::Schedule copy = handMade(0, 1, {step(StepOp::kCopy, -1, -1, 2)});
  EXPECT_TRUE(checkOne(copy, separateBuffers(4, 4), {0, 1, -1, -1}).ok());
  Status status = checkOne(copy, separateBuffers(4, 4), {0, 1, 2, 3});
  EXPECT_NE(status.message().find("output element 2 holds nothing (never written), expected "
                                  "element 2 of"),
            std::string::npos)
      << status.message();
  status = checkOne(copy, separateBuffers(4, 4), {0, 1, -1});
  EXPECT_NE(status.message().find("the output has 4 elements, expected 3"), std::string::npos)
      << status.message();
}

TEST(SymbolicCheck, OnBuffersRejectsBuffersOutsideTheirMemory) {
  const algo::Schedule copy = handMade(0, 1, {step(StepOp::kCopy, -1, -1, 2)});
  const Status status = checkOne(copy, oneBuffer(4, 0, 4, 2, 4), {0, 1, -1, -1});
  EXPECT_NE(status.message().find("rank 0's buffers lie outside its memory"), std::string::npos)
      << status.message();
  EXPECT_FALSE(checkOne(copy, oneBuffer(4, 3, 2, 0, 4), {0, 1, -1, -1}).ok());
}

}  // namespace
}  // namespace braid::sim::symbolic_check_test
