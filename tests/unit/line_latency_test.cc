// lineTransferNs (base/line_latency.h): a time for two CPUs this process may use, and no time
// where there is nothing to measure.
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
  if (outside < CPU_SETSIZE) EXPECT_LT(lineTransferNs(cpus[0], outside), 0);
}

}  // namespace
}  // namespace braid
