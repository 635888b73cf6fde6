// Which of a network plugin's devices a rank takes (topology/net_devices.h): the one nearest its
// GPU, by the bus ID its sysfs path ends in, on the DGX-like fixture (a NIC beside each GPU under
// one PCIe switch); equally near devices shared round the ranks; none on the machine: -1.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topology/net_devices.h"
#include "unit/topology_fixtures.h"

namespace braid::topology {
namespace {

using testing::kDgx;
using testing::loadFixture;

TEST(NetDevices, TheBusIdIsTheLastComponentOfThePath) {
  EXPECT_EQ(busIdOfPciPath("/sys/devices/pci0000:00/0000:00:01.0/0000:05:00.0"), "0000:05:00.0");
  EXPECT_EQ(busIdOfPciPath("/sys/devices/pci0000:10/0000:10:01.0/0000:1B:00.1/"), "0000:1b:00.1");
  EXPECT_EQ(busIdOfPciPath("0000:18:00.0"), "0000:18:00.0");
}

TEST(NetDevices, APathThatEndsInNoBusIdHasNone) {
  EXPECT_EQ(busIdOfPciPath(""), "");
  EXPECT_EQ(busIdOfPciPath("/sys/devices/virtual/net/bveth0"), "");
  EXPECT_EQ(busIdOfPciPath("/sys/devices/pci0000:00"), "");
  EXPECT_EQ(busIdOfPciPath("/sys/devices/pci0000:00/0000:0g:00.0"), "");
  EXPECT_EQ(busIdOfPciPath("/sys/devices/pci0000:00/0000:05:00.01"), "");
}

// The plugin lists mlx5_3, mlx5_1, mlx5_0, mlx5_2 (by their bus IDs), not in node order.
std::vector<std::string> dgxDevicesShuffled() {
  return {"0000:5e:00.0", "0000:40:00.0", "0000:18:00.0", "0000:4f:00.0"};
}

TEST(NetDevices, AGpuTakesTheDeviceBesideIt) {
  const Graph graph = loadFixture(kDgx);
  const Paths paths(graph);
  const int gpu0 = graph.findByBusId(0, "0000:1b:00.0");
  const int gpu1 = graph.findByBusId(0, "0000:43:00.0");
  const int gpu2 = graph.findByBusId(0, "0000:52:00.0");
  ASSERT_GE(gpu0, 0);
  ASSERT_GE(gpu1, 0);
  ASSERT_GE(gpu2, 0);
  for (int spread : {0, 1, 5}) {
    EXPECT_EQ(nearestNetDevice(graph, paths, gpu0, dgxDevicesShuffled(), spread), 2);
    EXPECT_EQ(nearestNetDevice(graph, paths, gpu1, dgxDevicesShuffled(), spread), 1);
    EXPECT_EQ(nearestNetDevice(graph, paths, gpu2, dgxDevicesShuffled(), spread), 3);
  }
}

// The path to the device taken, which NCCL_NET_GDR_LEVEL is held to: beside the GPU, within a
// PCIe switch (PXB at most); a device of another switch, farther.
TEST(NetDevices, TheTakenDevicesPathTypeIsGiven) {
  const Graph graph = loadFixture(kDgx);
  const Paths paths(graph);
  const int gpu0 = graph.findByBusId(0, "0000:1b:00.0");
  ASSERT_GE(gpu0, 0);
  PathType beside = PathType::kDis;
  ASSERT_EQ(nearestNetDevice(graph, paths, gpu0, dgxDevicesShuffled(), 0, &beside), 2);
  EXPECT_EQ(beside, paths.between(gpu0, graph.findByBusId(0, "0000:18:00.0")).type);
  EXPECT_LE(beside, PathType::kPxb);
  PathType far = PathType::kDis;
  ASSERT_EQ(nearestNetDevice(graph, paths, gpu0, {"0000:4f:00.0"}, 0, &far), 0);
  EXPECT_EQ(far, paths.between(gpu0, graph.findByBusId(0, "0000:4f:00.0")).type);
  EXPECT_GT(far, beside);
}

TEST(NetDevices, RanksEquallyNearSeveralDevicesGoRoundThem) {
  const Graph graph = loadFixture(kDgx);
  const Paths paths(graph);
  const std::vector<int> cpus = graph.nodesOfType(NodeType::kCpu, 0);
  ASSERT_FALSE(cpus.empty());
  // The four NICs hang off the first CPU's PCIe switches, all equally far from the CPU.
  std::vector<int> taken;
  for (int spread = 0; spread < 4; ++spread) {
    taken.push_back(nearestNetDevice(graph, paths, cpus[0], dgxDevicesShuffled(), spread));
  }
  EXPECT_EQ(taken, (std::vector<int>{0, 1, 2, 3}));
}

TEST(NetDevices, DevicesNotOnTheMachineAreNone) {
  const Graph graph = loadFixture(kDgx);
  const Paths paths(graph);
  const int gpu0 = graph.findByBusId(0, "0000:1b:00.0");
  ASSERT_GE(gpu0, 0);
  EXPECT_EQ(nearestNetDevice(graph, paths, gpu0, {"", "0000:aa:00.0"}, 0), -1);
  EXPECT_EQ(nearestNetDevice(graph, paths, gpu0, {}, 0), -1);
  // One known among unknown ones is taken wherever it is.
  EXPECT_EQ(nearestNetDevice(graph, paths, gpu0, {"", "0000:4f:00.0"}, 3), 1);
}

}  // namespace
}  // namespace braid::topology
