// braid-doctor's reading and reasoning: dumps written by the real flight recorder read back,
// and the verdicts on the shapes a hang takes (a rank that skipped a call, a rank gone, ranks
// waiting on each other, nothing waiting), and dumps that do not read.
#include "diagnosis.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dump_reader.h"
#include "flight/flight_recorder.h"
#include "kernels/engine/sync.h"

namespace braid::doctor {
namespace {

namespace engine = kernels::engine;

/// What one rank's recorder says after `done` finished calls, and, when `waitFor` >= 0, one
/// more all-reduce in flight whose channel 0 waits for rank `waitFor`.
std::string dumpOf(int rank, int nranks, int done, int waitFor, bool recv = true) {
  flight::Identity who;
  who.comm = 0xabcdef;
  who.rank = rank;
  who.nranks = nranks;
  who.pid = 100 + rank;
  who.host = "testhost";
  who.name = "trainer dp0";  // ncclConfig_t's commName
  flight::FlightRecorder recorder(who, 8, "");
  flight::CollectiveFields allReduce;
  allReduce.collective = "AllReduce";
  allReduce.count = 1024;
  allReduce.type = "float";
  allReduce.op = "sum";
  const flight::PlanFields ring{"ring", "simple", 1};
  for (int i = 0; i < done; ++i) {
    const uint64_t seq = recorder.begin(allReduce);
    recorder.planned(seq, ring, {12});
    recorder.end(seq, Status::success());
  }
  if (waitFor >= 0) {
    const uint64_t seq = recorder.begin(allReduce);
    recorder.planned(seq, ring, {12});
    engine::WaitRecord& w = recorder.hostWaits()[0];
    w.peer = waitFor;
    w.instr = 6;
    w.sinceNs = engine::clockNs() - 5000000000ull;
    w.kind = static_cast<uint32_t>(recv ? engine::WaitKind::kRecv : engine::WaitKind::kSend);
  }
  return recorder.render("test", {});
}

RankDump parsed(const std::string& text) {
  Result<RankDump> d = parseDump(text, "test");
  EXPECT_TRUE(d.ok()) << d.status().message() << "\n" << text;
  return d.ok() ? d.value() : RankDump{};
}

TEST(DumpReader, ReadsWhatTheRecorderWrites) {
  const RankDump d = parsed(dumpOf(2, 4, 3, 1));
  EXPECT_EQ(d.comm, "0x0000000000abcdef");
  EXPECT_EQ(d.rank, 2);
  EXPECT_EQ(d.nranks, 4);
  EXPECT_EQ(d.pid, 102);
  EXPECT_EQ(d.host, "testhost");
  EXPECT_EQ(d.name, "trainer dp0");
  EXPECT_EQ(d.memory, "host");
  EXPECT_EQ(d.reason, "test");
  ASSERT_EQ(d.calls.size(), 4u);
  EXPECT_EQ(d.calls[0].state, "done");
  EXPECT_EQ(d.calls[3].state, "running");
  EXPECT_EQ(d.calls[3].what, "AllReduce of 1024 x float sum");
  EXPECT_EQ(d.calls[3].how, "ring/simple, 1 channel");
  ASSERT_EQ(d.waits.size(), 1u);
  EXPECT_EQ(d.waits[0].seq, 4u);
  EXPECT_EQ(d.waits[0].peer, 1);
  EXPECT_TRUE(d.waits[0].recv);
  EXPECT_EQ(d.waits[0].instr, 7);
  EXPECT_EQ(d.waits[0].instrs, 12);
  EXPECT_GE(d.waits[0].ms, 5000.0);
  ASSERT_NE(d.stuckCall(), nullptr);
  EXPECT_EQ(d.stuckCall()->seq, 4u);
}

TEST(DumpReader, KeepsOnlyTheLastCallsOfAFullRing) {
  const RankDump d = parsed(dumpOf(0, 2, 20, -1));
  ASSERT_EQ(d.calls.size(), 8u);
  EXPECT_EQ(d.calls.front().seq, 13u);
  EXPECT_EQ(d.calls.back().seq, 20u);
}

TEST(DumpReader, RefusesWhatIsNotADump) {
  EXPECT_FALSE(parseDump("hello\n", "x").ok());
  std::string cut = dumpOf(0, 2, 1, 1);
  cut.resize(cut.size() - 4);  // no "end"
  const auto c = parseDump(cut, "cut.txt");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("cut short"), std::string::npos);
  std::string garbled = dumpOf(0, 2, 1, 1);
  garbled.insert(garbled.find("call: "), "call: seventeen\n");
  const auto g = parseDump(garbled, "g.txt");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("g.txt:"), std::string::npos) << g.status().message();
}

TEST(Diagnosis, NamesTheRankThatSkippedACall) {
  // Ranks 0, 1, 3 are in call 4; rank 2 has made only 3 calls. Rank 1 waits for rank 0, which
  // waits for rank 2; rank 3 waits for rank 2 for room to send.
  std::vector<RankDump> dumps = {parsed(dumpOf(0, 4, 3, 2)), parsed(dumpOf(1, 4, 3, 0)),
                                 parsed(dumpOf(2, 4, 3, -1)), parsed(dumpOf(3, 4, 3, 2, false))};
  const Diagnosis d = diagnose(dumps);
  EXPECT_EQ(d.culprit, 2);
  EXPECT_NE(d.verdict.find("rank 2 is the one the others wait for"), std::string::npos)
      << d.verdict;
  EXPECT_NE(d.verdict.find("ranks 0, 1 and 3"), std::string::npos) << d.verdict;
  EXPECT_NE(d.verdict.find("has not made call 4"), std::string::npos) << d.verdict;
  ASSERT_EQ(d.ranks.size(), 4u);
  EXPECT_NE(d.ranks[2].find("idle after call 3"), std::string::npos) << d.ranks[2];
  EXPECT_NE(d.ranks[3].find("for room to send"), std::string::npos) << d.ranks[3];
}

TEST(Diagnosis, NamesARankThatLeftNoDump) {
  std::vector<RankDump> dumps = {parsed(dumpOf(0, 3, 5, 2)), parsed(dumpOf(1, 3, 5, 0))};
  const Diagnosis d = diagnose(dumps);
  EXPECT_EQ(d.culprit, 2);
  EXPECT_NE(d.verdict.find("left no dump"), std::string::npos) << d.verdict;
  EXPECT_NE(report(dumps, d).find("dumps from ranks 0 and 1"), std::string::npos);
}

TEST(Diagnosis, SaysWhenRanksWaitOnEachOther) {
  std::vector<RankDump> dumps = {parsed(dumpOf(0, 2, 1, 1)), parsed(dumpOf(1, 2, 1, 0))};
  const Diagnosis d = diagnose(dumps);
  EXPECT_EQ(d.culprit, -1);
  EXPECT_NE(d.verdict.find("wait for each other"), std::string::npos) << d.verdict;
}

TEST(Diagnosis, SaysWhenNothingWaits) {
  std::vector<RankDump> dumps = {parsed(dumpOf(0, 2, 4, -1)), parsed(dumpOf(1, 2, 4, -1))};
  const Diagnosis d = diagnose(dumps);
  EXPECT_EQ(d.culprit, -1);
  EXPECT_NE(d.verdict.find("no rank waits"), std::string::npos) << d.verdict;
}

}  // namespace
}  // namespace braid::doctor
