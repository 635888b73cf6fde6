// lineTransferNs (base/line_latency.h): a time for two CPUs this process may use, and no time
// where there is nothing to measure; recentLineTransferNs measures a pair once per age.
#include "base/line_latency.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "topology/cpu_affinity.h"

namespace braid {
namespace {

std::vector<int> allowed() { return topology::allowedCpus(); }

TEST(LineLatency, TwoAllowedCpusGiveATime) {
  const std::vector<int> cpus = allowed();
  ASSERT_GE(cpus.size(), 2u) << "this suite's machines have two CPUs at least";
  // A budget of seconds: the suite runs tests side by side, and the echo needs its CPU a moment.
  const double ns = lineTransferNs(cpus[0], cpus[1], std::chrono::seconds(2));
  // Positive and below the budget's worth: one round trip at least fitted in a batch.
  EXPECT_GT(ns, 0);
  EXPECT_LT(ns, 2e9);
}

TEST(LineLatency, NothingToMeasureIsNegative) {
  const std::vector<int> cpus = allowed();
  ASSERT_FALSE(cpus.empty());
  EXPECT_LT(lineTransferNs(cpus[0], cpus[0]), 0);  // the same CPU
  EXPECT_LT(lineTransferNs(cpus[0], -1), 0);
  EXPECT_LT(lineTransferNs(cpus[0], CPU_SETSIZE), 0);
  // A CPU this process may not run on: pinning to it fails.
  int outside = 0;
  while (outside < CPU_SETSIZE && std::find(cpus.begin(), cpus.end(), outside) != cpus.end()) {
    ++outside;
  }
  if (outside < CPU_SETSIZE) {
    EXPECT_LT(lineTransferNs(cpus[0], outside), 0);
  }
}

TEST(LineLatency, ARecentMeasurementIsReusedAndAnOldOneRenewed) {
  const std::vector<int> cpus = allowed();
  ASSERT_GE(cpus.size(), 2u);
  const auto hour = std::chrono::seconds(3600);
  const double first = recentLineTransferNs(cpus[0], cpus[1], hour);
  // Two measurements almost never agree to the last bit: the same value is the kept one.
  EXPECT_EQ(recentLineTransferNs(cpus[0], cpus[1], hour), first);
  // Age 0: measured again, and what is kept from then on is the new one.
  const double renewed = recentLineTransferNs(cpus[0], cpus[1], std::chrono::seconds(0));
  EXPECT_EQ(recentLineTransferNs(cpus[0], cpus[1], hour), renewed);
  // The other direction is a pair of its own.
  (void)recentLineTransferNs(cpus[1], cpus[0], hour);
  EXPECT_EQ(recentLineTransferNs(cpus[0], cpus[1], hour), renewed);
}

}  // namespace
}  // namespace braid
