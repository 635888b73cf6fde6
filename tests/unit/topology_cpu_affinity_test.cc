// Where a host-memory rank runs (topology/cpu_affinity.h): CPU lists as
// Linux and hwloc write them, and the CPU node that holds a rank's CPUs.
#include <gtest/gtest.h>

#include <vector>

#include "topology/cpu_affinity.h"
#include "topology_fixtures.h"

namespace braid::topology {
namespace {

using testing::loadFixture;

std::vector<int> cpus(const std::string& list) {
  Result<std::vector<int>> r = parseCpuList(list);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : std::vector<int>{};
}

TEST(TopologyCpuList, ParsesSinglesAndRanges) {
  EXPECT_EQ(cpus("0"), (std::vector<int>{0}));
  EXPECT_EQ(cpus("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  // Unordered and overlapping items still give each CPU once, ascending.
  EXPECT_EQ(cpus("5,1-2,2"), (std::vector<int>{1, 2, 5}));
}

TEST(TopologyCpuList, RefusesMalformedLists) {
  for (const char* bad : {"", "a", "1-", "-1", "3-1", "1,,2", "1;2", " 1"}) {
    Result<std::vector<int>> r = parseCpuList(bad);
    ASSERT_FALSE(r.ok()) << "\"" << bad << "\" was accepted";
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("CPU list"), std::string::npos) << r.status().message();
  }
}

// pcie-4gpu-2socket: cpu0 (NUMA 0) has cores 0-31,64-95, cpu1 (NUMA 1) 32-63,96-127.
TEST(TopologyCpuAffinity, CpusOfOneSocketGiveItsNumaNode) {
  const Graph g = loadFixture("pcie-4gpu-2socket.braid.xml");
  EXPECT_EQ(numaOfCpus(g, 0, {3}), 0);
  EXPECT_EQ(numaOfCpus(g, 0, {64, 0, 31}), 0);
  EXPECT_EQ(numaOfCpus(g, 0, {32, 100}), 1);
}

TEST(TopologyCpuAffinity, UnpinnedOrUnknownCpusGiveNoNode) {
  const Graph g = loadFixture("pcie-4gpu-2socket.braid.xml");
  EXPECT_EQ(numaOfCpus(g, 0, {}), -1);
  EXPECT_EQ(numaOfCpus(g, 0, {0, 32}), -1) << "a rank allowed on both sockets is on neither";
  EXPECT_EQ(numaOfCpus(g, 0, {500}), -1) << "a CPU the topology does not list";
}

TEST(TopologyCpuAffinity, ThisThreadMayRunSomewhere) {
  const std::vector<int> mine = allowedCpus();
  ASSERT_FALSE(mine.empty());
  EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
}

TEST(TopologyCpuAffinity, CpuMasksCountTheUnionOfTheirCpus) {
  CpuMask a = CpuMask::of({0, 3, 64, 1023});
  EXPECT_EQ(a.count(), 4);
  EXPECT_EQ(CpuMask::of({1024, -1, 5000}).count(), 0) << "CPUs past the mask are left out";
  EXPECT_TRUE(CpuMask().empty());
  a |= CpuMask::of({3, 4, 65});
  EXPECT_EQ(a.count(), 6) << "CPU 3 counts once";
  EXPECT_EQ(CpuMask::of(allowedCpus()).count(), static_cast<int>(allowedCpus().size()));
}

}  // namespace
}  // namespace braid::topology
