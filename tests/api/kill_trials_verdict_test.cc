// The kill trials' own verdict (tests/support/kill_trials.h): a survivor that crashes instead of
// returning its error must fail the trial, never vanish from the count (issue 31's first point),
// and one that returns it later than the bound after the kill fails it too (issue 48).
// The trial runs with a reporter that catches its failures, and this test checks they came.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "nccl.h"
#include "support/kill_trials.h"

namespace {

using braid::testing::KillTrialSetup;
using braid::testing::KillWhen;

TEST(KillTrialsVerdict, ASurvivorThatCrashesFailsTheTrial) {
  KillTrialSetup setup;
  setup.nranks = 3;
  setup.trials = 1;
  setup.when = KillWhen::kIdleAfterInit;
  setup.victim = 0;
  setup.beforeInit = [](int) { setenv("BRAID_HOST_COMM", "1", 1); };
  // Sees the loss as it should, then crashes where it would have reported it.
  setup.loop = [](ncclComm_t comm, int, int, uint64_t, int32_t*) -> ncclResult_t {
    std::vector<float> data(1024, 1.0f);
    while (ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm,
                         nullptr) == ncclSuccess) {
    }
    abort();
  };
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    (void)braid::testing::runKillTrials(setup, "survivors that crash");
  }
  int crashed = 0;
  std::string all;
  for (int i = 0; i < failures.size(); ++i) {
    const std::string message = failures.GetTestPartResult(i).message();
    all += message + "\n";
    if (message.find("killed by signal 6") != std::string::npos) ++crashed;
  }
  EXPECT_EQ(crashed, 2) << "each crashed survivor must fail the trial, saying how it ended:\n"
                        << all;
}

// A survivor that returns its error late, as one that heard of the loss through the heartbeat's
// silence or its deadline would, must fail the trial, whose bound is measured from the kill.
// Here each survivor sees the loss and then waits 1 s before it returns, against a bound of
// 300 ms (the default is 10 s: kErrorBoundMs).
TEST(KillTrialsVerdict, ASurvivorThatErrsLateFailsTheTrial) {
  KillTrialSetup setup;
  setup.nranks = 3;
  setup.trials = 1;
  setup.when = KillWhen::kIdleAfterInit;
  setup.victim = 0;
  setup.errorBoundMs = 300;
  setup.beforeInit = [](int) { setenv("BRAID_HOST_COMM", "1", 1); };
  setup.loop = [](ncclComm_t comm, int, int, uint64_t, int32_t*) -> ncclResult_t {
    std::vector<float> data(1024, 1.0f);
    ncclResult_t r = ncclSuccess;
    while ((r = ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm,
                              nullptr)) == ncclSuccess) {
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
    return r;
  };
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    (void)braid::testing::runKillTrials(setup, "survivors that return late");
  }
  int late = 0;
  std::string all;
  for (int i = 0; i < failures.size(); ++i) {
    const std::string message = failures.GetTestPartResult(i).message();
    all += message + "\n";
    if (message.find("over the bound of 300 ms") != std::string::npos) ++late;
  }
  EXPECT_EQ(late, 2) << "each late survivor must fail the trial, saying how late:\n" << all;
}

}  // namespace
