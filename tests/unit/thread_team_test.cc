// The emulated GPU's block (kernels/engine/thread_team.h): what the interpreter asks of a team,
// checked on teams of 1, 2, 4 and 7 threads over many rounds, so that a barrier that lets a
// thread through early, a shared value read before the leader wrote it, or a vote that leaks
// into the next round shows here rather than as a wrong collective.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "kernels/engine/thread_team.h"

namespace braid::kernels::engine {
namespace {

/// Runs body(team) on every thread of a block of `threads`.
template <typename Body>
void runTeam(unsigned threads, Body body) {
  BlockState block(threads);
  std::vector<std::thread> members;
  for (unsigned t = 0; t < threads; ++t) {
    members.emplace_back([&, t] { body(ThreadTeam(block, t)); });
  }
  for (auto& m : members) m.join();
}

class ThreadTeams : public ::testing::TestWithParam<unsigned> {};

TEST_P(ThreadTeams, SyncLetsNoThreadPastBeforeAllArrive) {
  const unsigned n = GetParam();
  std::atomic<unsigned> arrived{0};
  std::atomic<unsigned> early{0};
  runTeam(n, [&](const ThreadTeam& team) {
    for (unsigned round = 1; round <= 200; ++round) {
      arrived.fetch_add(1);
      team.sync();
      if (arrived.load() < round * n) early.fetch_add(1);
      team.sync();
    }
  });
  EXPECT_EQ(early.load(), 0u);
}

TEST_P(ThreadTeams, ShareHandsEveryThreadTheLeadersValue) {
  const unsigned n = GetParam();
  std::atomic<unsigned> wrong{0};
  struct Pair {
    uint64_t a;
    uint32_t b;
  };
  runTeam(n, [&](const ThreadTeam& team) {
    for (uint32_t round = 0; round < 300; ++round) {
      // Every thread offers its own value; only the leader's may come back.
      const Pair mine{round * 1000003ull + team.rank(), round ^ team.rank()};
      const Pair got = team.share(mine);
      if (got.a != round * 1000003ull || got.b != round) wrong.fetch_add(1);
    }
  });
  EXPECT_EQ(wrong.load(), 0u);
}

TEST_P(ThreadTeams, AnyIsTheOrOfTheRoundsVotesAndOnlyOfThem) {
  const unsigned n = GetParam();
  std::atomic<unsigned> wrong{0};
  runTeam(n, [&](const ThreadTeam& team) {
    for (unsigned round = 0; round < 300; ++round) {
      // Round r: only thread r % (n + 1) votes yes; every (n + 1)th round nobody does, so a yes
      // left over from the round before would show.
      const unsigned voter = round % (n + 1);
      const bool want = voter < n;
      if (team.any(team.rank() == voter) != want) wrong.fetch_add(1);
    }
  });
  EXPECT_EQ(wrong.load(), 0u);
}

TEST_P(ThreadTeams, ExchangeHandsEveryThreadTheLeadersAndTheSendersValues) {
  const unsigned n = GetParam();
  std::atomic<unsigned> wrong{0};
  runTeam(n, [&](const ThreadTeam& team) {
    const unsigned sender = team.sender();
    if (sender >= n || (n > 1 && sender == 0)) wrong.fetch_add(1);  // its own thread, where it can
    for (uint32_t round = 0; round < 300; ++round) {
      // Every thread offers its own pair; only the leader's first and the sender's second count.
      uint64_t a = round * 1000003ull + team.rank();
      uint32_t b = round ^ (team.rank() << 16);
      team.exchange(a, b);
      if (a != round * 1000003ull || b != (round ^ (sender << 16))) wrong.fetch_add(1);
    }
  });
  EXPECT_EQ(wrong.load(), 0u);
}

TEST_P(ThreadTeams, AStopRaisedByOneThreadIsSeenByEveryThread) {
  const unsigned n = GetParam();
  std::atomic<unsigned> wrong{0};
  runTeam(n, [&](const ThreadTeam& team) {
    for (unsigned round = 0; round < 100; ++round) {
      if (team.leader()) team.clearStop();
      team.sync();
      if (team.stopRaised()) wrong.fetch_add(1);
      team.sync();
      if (team.rank() == round % n) team.raiseStop();
      team.sync();
      if (!team.stopRaised()) wrong.fetch_add(1);
      team.sync();
    }
  });
  EXPECT_EQ(wrong.load(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Sizes, ThreadTeams, ::testing::Values(1u, 2u, 4u, 7u));

}  // namespace
}  // namespace braid::kernels::engine
