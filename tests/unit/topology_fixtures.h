// The topology files of tests/data/topologies, for the topology tests.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "topology/graph.h"
#include "topology/paths.h"
#include "topology/placement.h"
#include "topology/topology_file.h"

namespace braid::topology::testing {

/// The path of fixture `name`, absolute so that the tests run from any directory.
inline std::string fixturePath(const std::string& name) {
  return std::string(BRAID_TESTS_DIR) + "/data/topologies/" + name;
}

/// The text of fixture `name` ("" when it cannot be read: the test's own checks then fail).
inline std::string readFixtureText(const std::string& name) {
  std::ifstream file(fixturePath(name), std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// The graph of fixture `name`; fails the test (and returns an empty graph)
/// when it does not load.
inline Graph loadFixture(const std::string& name) {
  auto graph = loadTopologyFile(fixturePath(name));
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  return graph.ok() ? std::move(graph).value() : Graph();
}

/// The node of `host` called `name`; fails the test when there is none.
inline int nodeNamed(const Graph& graph, const std::string& name, int host = 0) {
  const int index = graph.findByName(host, name);
  EXPECT_GE(index, 0) << "no node " << name << " on host " << host;
  return index;
}

/// A node for graphs built by hand in tests.
inline Node makeNode(NodeType type, const std::string& name, int host = 0) {
  Node node;
  node.type = type;
  node.host = host;
  node.name = name;
  return node;
}

inline constexpr const char* kDgx = "dgx-h100-like.nccl.xml";
inline constexpr const char* kPcie4 = "pcie-4gpu-2socket.nccl.xml";
inline constexpr const char* kPcie4Braid = "pcie-4gpu-2socket.braid.xml";
inline constexpr const char* kBridge = "nvlink-bridge-4gpu.nccl.xml";
inline constexpr const char* kTwoBridgeHosts = "two-nvlink-bridge-hosts.braid.xml";
inline constexpr const char* kTwoDgxHosts = "two-dgx-h100-like.braid.xml";
inline constexpr const char* kBuildMachineHwloc = "build-machine.hwloc.xml";

}  // namespace braid::topology::testing
