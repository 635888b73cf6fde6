// Hangs explained (src/flight, tools/doctor): host ranks in processes where one rank skips a
// call. On SIGUSR1 every rank dumps its flight recorder and braid-doctor names the skipper; on
// a timeout the waiting ranks dump by themselves; after a kill the survivors' dumps name the
// lost rank.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "nccl.h"
#include "support/hang_scenario.h"
#include "support/kill_trials.h"
#include "support/multiprocess.h"
#include "support/shared_counter.h"

namespace {

using braid::testing::DumpDir;
using braid::testing::HangScenario;
using braid::testing::runCommand;

ncclResult_t hostAllReduce(ncclComm_t comm, int) {
  std::vector<float> data(1 << 18, 1.0f);
  return ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr);
}

TEST(FlightRecorder, SigusrDumpsNameTheRankThatSkippedACall) {
  const DumpDir dumps("flight-usr1");
  const std::string& dir = dumps.path();
  ASSERT_FALSE(dir.empty());
  HangScenario s;
  s.beforeInit = [](int) { setenv("BRAID_HOST_COMM", "1", 1); };
  s.call = hostAllReduce;
  const std::string diagnosis = braid::testing::runHangScenario(s, dir, BRAID_DOCTOR_PATH);
  EXPECT_NE(diagnosis.find("verdict: rank 2 is the one the others wait for"), std::string::npos)
      << diagnosis;
  EXPECT_NE(diagnosis.find("has not made call 4"), std::string::npos) << diagnosis;
  EXPECT_NE(diagnosis.find("rank 0: in call 4 (AllReduce of 262144 x float sum"), std::string::npos)
      << diagnosis;
  // The dumps themselves are for a person: the waiting rank says for whom, and since when.
  const std::string dump = runCommand("cat " + dir + "/braid-flight-*-rank0.txt");
  EXPECT_NE(dump.find("reason: SIGUSR1"), std::string::npos) << dump;
  EXPECT_NE(dump.find("call: 4 running AllReduce"), std::string::npos) << dump;
  EXPECT_NE(dump.find("wait: call 4 channel 0 "), std::string::npos) << dump;
}

// A tiny call repeated runs in the tiny lane (comm/ways/tiny_lane.cc), which records the call
// after publishing its input: the record is there before the wait all the same, and the
// one-shot board notes whom it waits for, so the doctor names the rank that skipped.
TEST(FlightRecorder, ATinyLaneCallIsRecordedBeforeItWaits) {
  const DumpDir dumps("flight-tiny");
  const std::string& dir = dumps.path();
  ASSERT_FALSE(dir.empty());
  HangScenario s;
  s.beforeInit = [](int) { setenv("BRAID_HOST_COMM", "1", 1); };
  s.call = [](ncclComm_t comm, int) {
    float data[2] = {1.0f, 2.0f};
    return ncclAllReduce(data, data, 2, ncclFloat32, ncclSum, comm, nullptr);
  };
  const std::string diagnosis = braid::testing::runHangScenario(s, dir, BRAID_DOCTOR_PATH);
  EXPECT_NE(diagnosis.find("verdict: rank 2 is the one the others wait for"), std::string::npos)
      << diagnosis;
  EXPECT_NE(diagnosis.find("rank 0: in call 4 (AllReduce of 2 x float sum"), std::string::npos)
      << diagnosis;
  const std::string dump = runCommand("cat " + dir + "/braid-flight-*-rank0.txt");
  EXPECT_NE(dump.find("call: 4 running AllReduce of 2 x float sum"), std::string::npos) << dump;
  EXPECT_NE(dump.find("one-shot (tiny lane)/ll"), std::string::npos) << dump;
  // Rank 1 published its input; rank 0 waits for rank 2's.
  EXPECT_NE(dump.find("wait: call 4 channel 0 recv rank 2 "), std::string::npos) << dump;
}

TEST(FlightRecorder, ATimeoutDumpsByItself) {
  const DumpDir dumps("flight-timeout");
  const std::string& dir = dumps.path();
  ASSERT_FALSE(dir.empty());
  ncclUniqueId id{};
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::SharedCounter timedOut;
  braid::testing::runProcesses(3, [&](int rank) {
    setenv("BRAID_HOST_COMM", "1", 1);
    setenv("BRAID_TIMEOUT_MS", "1500", 1);
    setenv("BRAID_FLIGHT_RECORDER", dir.c_str(), 1);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, 3, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    ASSERT_EQ(hostAllReduce(comm, rank), ncclSuccess) << ncclGetLastError(comm);
    if (rank != 2) {
      EXPECT_EQ(hostAllReduce(comm, rank), ncclRemoteError);
      EXPECT_NE(std::string(ncclGetLastError(comm)).find("timed out"), std::string::npos);
      timedOut.add();
    } else {
      // Rank 2 skips the second call and stays until the others' calls timed out: its goodbye
      // would otherwise end them first.
      EXPECT_TRUE(timedOut.waitFor(2));
    }
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
  const std::string dump = runCommand("cat " + dir + "/braid-flight-*-rank0.txt");
  EXPECT_NE(dump.find("reason: AllReduce of 262144 x float sum failed: "), std::string::npos)
      << dump;
  EXPECT_NE(dump.find("timed out"), std::string::npos) << dump;
  const std::string diagnosis = runCommand(std::string(BRAID_DOCTOR_PATH) + " " + dir);
  EXPECT_NE(diagnosis.find("dumps from ranks 0 and 1"), std::string::npos) << diagnosis;
  EXPECT_NE(diagnosis.find("rank 2: no dump"), std::string::npos) << diagnosis;
  EXPECT_NE(diagnosis.find("verdict: rank 2 is the one the others wait for"), std::string::npos)
      << diagnosis;
}

TEST(FlightRecorder, SurvivorsOfAKillDumpAndNameTheLostRank) {
  const DumpDir dumps("flight-kill");
  const std::string& dir = dumps.path();
  ASSERT_FALSE(dir.empty());
  braid::testing::KillTrialSetup setup;
  setup.trials = 1;
  setup.seed = 41;
  setup.beforeInit = [dir](int) {
    setenv("BRAID_HOST_COMM", "1", 1);
    setenv("BRAID_FLIGHT_RECORDER", dir.c_str(), 1);
  };
  setup.loop = [](ncclComm_t comm, int rank, int, uint64_t, int32_t* calls) {
    for (;;) {
      const ncclResult_t r = hostAllReduce(comm, rank);
      if (r != ncclSuccess) return r;
      ++*calls;
    }
  };
  braid::testing::runKillTrials(setup, "flight recorder after a kill");
  const int victim = braid::testing::victimOf(setup, 0);
  const std::string diagnosis = runCommand(std::string(BRAID_DOCTOR_PATH) + " " + dir);
  EXPECT_NE(diagnosis.find("rank " + std::to_string(victim) + ": lost"), std::string::npos)
      << diagnosis;
}

}  // namespace
