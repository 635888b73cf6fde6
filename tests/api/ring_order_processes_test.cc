// Collectives on a ring whose order is not 0, 1, ..., N-1. Four processes
// pinned alternately to two CPUs, on a topology file that puts those CPUs on
// two sockets (two-socket-one-core-each.braid.xml), are placed 0 cpu0,
// 1 cpu1, 2 cpu0, 3 cpu1, and the ring search orders them 0 2 1 3 to cross
// the socket link twice instead of four times. Every rank must then connect
// to its neighbours in that order (an early version took ring[rank +- 1]
// and hung at creation), and every algorithm must give the reference result.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "api/matrix_cases.h"
#include "api/process_cases.h"

namespace ring_order_processes_test {

using braid::testing::matrix::Case;
using braid::testing::matrix::Coll;
using braid::testing::matrix::Op;

constexpr int kRanks = 4;

std::string fixturePath() {
  return std::string(BRAID_TESTS_DIR) + "/data/topologies/two-socket-one-core-each.braid.xml";
}

// The first two CPUs this process may use; fewer than two when it may use only one.
std::vector<int> twoCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < 2; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

class RingOrderProcesses : public ::testing::TestWithParam<const char*> {};

TEST_P(RingOrderProcesses, EveryCollectiveMatchesTheReference) {
  const std::vector<int> cpus = twoCpus();
  // The fixture names CPUs 0 and 1: pinning elsewhere would place nobody.
  if (cpus != std::vector<int>{0, 1}) GTEST_SKIP() << "needs CPUs 0 and 1 to pin ranks apart";
  const char* algo = GetParam();
  std::vector<Case> cases;
  for (Coll coll : {Coll::kAllReduce, Coll::kReduceScatter, Coll::kAllGather, Coll::kBroadcast,
                    Coll::kReduce}) {
    for (size_t count : {size_t{1}, size_t{4099}, size_t{300001}}) {
      for (bool inPlace : {false, true}) {
        cases.push_back({coll, ncclFloat32, Op::kSum, count, kRanks, inPlace, 1});
      }
    }
  }
  braid::testing::matrix::runCasesInProcesses(kRanks, cases, [algo](int rank) {
    cpu_set_t mine;
    CPU_ZERO(&mine);
    CPU_SET(rank % 2, &mine);
    ASSERT_EQ(sched_setaffinity(0, sizeof(mine), &mine), 0);
    setenv("BRAID_TOPO_FILE", fixturePath().c_str(), 1);
    setenv("BRAID_ALGO", algo, 1);
  });
}

// Each algorithm where it applies; the collectives it cannot run fall back to the ring.
INSTANTIATE_TEST_SUITE_P(Pinned, RingOrderProcesses, ::testing::Values("ring", "tree", "oneshot"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace ring_order_processes_test
