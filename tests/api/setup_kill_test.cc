// A rank lost while a communicator is set up or connects (issue 25's first point): the victim
// dies at an exact point (base/test_fault.h) of init or of the lazy connections a first
// collective makes, or finishes init and is killed before it calls anything, and every survivor
// must return ncclRemoteError that names it as lost, from init or from its first calls, whatever
// the transport that met the death first: shared memory, sockets, or verbs on the emulated HCA.
// One trial per point: the point makes the order certain, so repeating it adds nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "nccl.h"
#include "support/kill_trials.h"

namespace {

using braid::testing::KillTrialSetup;
using braid::testing::KillWhen;
using braid::testing::runKillTrials;

/// All-reduces of 64 Ki floats until one fails, each checked: a call that succeeds with a wrong
/// sum is a failure of its own (ncclInternalError), never mistaken for the loss.
ncclResult_t checkedAllReduces(ncclComm_t comm, int rank, int nranks, uint64_t, int32_t* calls) {
  constexpr size_t kCount = 64 << 10;
  std::vector<float> in(kCount, static_cast<float>(rank + 1));
  std::vector<float> out(kCount);
  const float expected = static_cast<float>(nranks * (nranks + 1) / 2);
  for (;;) {
    const ncclResult_t r =
        ncclAllReduce(in.data(), out.data(), kCount, ncclFloat32, ncclSum, comm, nullptr);
    if (r != ncclSuccess) return r;
    for (float v : out) {
      if (v != expected) return ncclInternalError;
    }
    ++*calls;
  }
}

enum class Hosts { kOne, kTwoSockets, kFourVerbs };

/// One trial of `when` (and `point`) with 4 host ranks on `hosts`; the tree all-reduce's links are
/// not the ring's, so a first call connects some of them lazily across hosts.
void killDuringSetup(Hosts hosts, KillWhen when, int victim, const std::string& point,
                     bool armAfterInit) {
  KillTrialSetup setup;
  setup.trials = 1;
  setup.when = when;
  setup.victim = victim;
  setup.dieAt = point;
  setup.armAfterInit = armAfterInit;
  setup.loop = checkedAllReduces;
  setup.beforeInit = [hosts](int rank) {
    setenv("BRAID_HOST_COMM", "1", 1);
    setenv("BRAID_ALGO", "Tree", 1);
    if (hosts == Hosts::kTwoSockets) {
      setenv("BRAID_HOSTID", rank < 2 ? "setup-kill-a" : "setup-kill-b", 1);
      setenv("BRAID_NET", "Socket", 1);
    } else if (hosts == Hosts::kFourVerbs) {
      setenv("BRAID_HOSTID", ("setup-kill-" + std::to_string(rank)).c_str(), 1);
      setenv("BRAID_IB_EMULATE", "1", 1);
      setenv("BRAID_NET", "IB", 1);
    }
  };
  const std::string what =
      "rank " + std::to_string(victim) + " lost " +
      (when == KillWhen::kIdleAfterInit ? "idle after init"
                                        : "at " + point + (armAfterInit ? " (lazy)" : " (init)"));
  const auto summary = runKillTrials(setup, what.c_str());
  EXPECT_EQ(summary.hangs, 0);
  EXPECT_EQ(summary.survivors, 3);
  EXPECT_EQ(summary.namedTheRank, summary.survivors);
}

// Ring order 0 1 2 3: on two hosts (0 1 | 2 3) rank 1 connects to rank 2 and rank 2 takes its
// greeting, during init. Across hosts the tree all-reduce runs the planned tree (a chain in each
// host, 0 -> 1 and 2 -> 3, and host b's head under host a's), which adds the links 1->0, 3->2,
// 2->0 and 0->2, connected lazily by a first call: so ranks 0 and 2 take a greeting in a first
// call (each one from the other host), ranks 1 and 3 none (their receives are the ring's), and
// rank 2 connects to rank 0 on the other host. On four hosts of one rank the tree is the
// double binary tree's over the hosts. A verbs FIFO's receiver takes its greeting on the proxy
// thread, so an init greeting may still be taken after init: the victim then dies there, still
// after init; one that would take no greeting in a first call waits for nothing and the trial fails
// saying so.
TEST(SetupKill, OneHostAfterTheWatchStarted) {
  killDuringSetup(Hosts::kOne, KillWhen::kAtPoint, 2, "watch.started", false);
}
TEST(SetupKill, OneHostIdleAfterInit) {
  killDuringSetup(Hosts::kOne, KillWhen::kIdleAfterInit, 1, "", false);
}
TEST(SetupKill, SocketsAfterTheWatchStarted) {
  killDuringSetup(Hosts::kTwoSockets, KillWhen::kAtPoint, 1, "watch.started", false);
}
TEST(SetupKill, SocketsBeforeTheGreetingInInit) {
  killDuringSetup(Hosts::kTwoSockets, KillWhen::kAtPoint, 1, "greeting.before", false);
}
TEST(SetupKill, SocketsAfterTheGreetingInInit) {
  killDuringSetup(Hosts::kTwoSockets, KillWhen::kAtPoint, 1, "greeting.sent", false);
}
TEST(SetupKill, SocketsOnTakingTheGreetingInInit) {
  killDuringSetup(Hosts::kTwoSockets, KillWhen::kAtPoint, 2, "greeting.taken", false);
}
TEST(SetupKill, SocketsIdleAfterInit) {
  killDuringSetup(Hosts::kTwoSockets, KillWhen::kIdleAfterInit, 2, "", false);
}
TEST(SetupKill, SocketsBeforeTheGreetingOfAFirstCall) {
  killDuringSetup(Hosts::kTwoSockets, KillWhen::kAtPoint, 2, "greeting.before", true);
}
TEST(SetupKill, SocketsAfterTheGreetingOfAFirstCall) {
  killDuringSetup(Hosts::kTwoSockets, KillWhen::kAtPoint, 2, "greeting.sent", true);
}
TEST(SetupKill, SocketsOnTakingTheGreetingOfAFirstCall) {
  killDuringSetup(Hosts::kTwoSockets, KillWhen::kAtPoint, 0, "greeting.taken", true);
}
TEST(SetupKill, VerbsAfterTheGreetingInInit) {
  killDuringSetup(Hosts::kFourVerbs, KillWhen::kAtPoint, 3, "greeting.sent", false);
}
TEST(SetupKill, VerbsOnTakingTheGreetingInInit) {
  killDuringSetup(Hosts::kFourVerbs, KillWhen::kAtPoint, 1, "greeting.taken", false);
}
TEST(SetupKill, VerbsIdleAfterInit) {
  killDuringSetup(Hosts::kFourVerbs, KillWhen::kIdleAfterInit, 0, "", false);
}
TEST(SetupKill, VerbsAfterTheGreetingOfAFirstCall) {
  killDuringSetup(Hosts::kFourVerbs, KillWhen::kAtPoint, 2, "greeting.sent", true);
}
TEST(SetupKill, VerbsOnTakingTheGreetingOfAFirstCall) {
  killDuringSetup(Hosts::kFourVerbs, KillWhen::kAtPoint, 0, "greeting.taken", true);
}

}  // namespace
