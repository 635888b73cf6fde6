// Ring and tree search: the orders in which the ranks of a communicator
// pass data, chosen from the graph. Pure functions of (graph, paths,
// placement, options); order_search.h holds the engine and its terms.
//
// Rings. On one host the ring is the best cycle through all ranks: the
// highest bandwidth, then the fewest steps over the worst paths, so that a
// ring over two sockets crosses the socket link exactly twice. Each further
// channel is searched on what the earlier ones left of every link, and the
// search stops when a channel would get nothing (or at maxChannels): one
// ring that saturates its links gets one channel, unless the caller says
// how much one channel can move (channelCapGBs).
//
// Across hosts each ring is a chain per host, joined host after host. A
// chain enters its host at one rank and leaves it at another. On rails (the
// default): a host's NICs nearest its ranks are numbered in the order of the
// machine, channel c runs on rail c mod R (R: the most a host has) and enters
// and leaves every host by that host's NIC of its rail, entering at a rank
// nearest that NIC (the next one each time the rail comes round) and leaving
// by another rank near it where there is one, else by the rank before the
// entry, so that the chain can follow the machine; each NIC then carries
// traffic both ways, and traffic never crosses from one rail to another. With crossNic = 1 each end
// uses its own nearest NIC (assignNics): channel c enters host h at its c-th rank (even c first, so
// the first channels spread over all NICs) and leaves at the rank before.
//
// Trees. As NCCL's double binary tree: between hosts, an in-order binary
// tree over the hosts (a host's height is the lowest set bit of its
// position, so odd positions are leaves) and the same tree over the hosts
// moved to positions of the other parity (shifted by one for an odd count,
// mirrored for an even one), so that a host that is a leaf in one tree is
// inside the other; within a host, a chain from a head rank that talks to
// the other hosts through its NIC. Tree t has the shape t mod 2. Across
// hosts on rails there is a tree per rail (R of them, 2R where R is odd, at
// least 2): tree t's heads are ranks nearest rail t mod R's NIC, which its
// edges between hosts use, so tree all_reduce's channels (channel c runs
// tree c mod T) spread over every NIC as NCCL's channels each take one.
// Otherwise (one host, or crossNic = 1) two trees: the first's head is a
// host's first rank, the second's the middle one, so the trees use
// different NICs.
#pragma once

#include <vector>

#include "topology/graph.h"
#include "topology/paths.h"
#include "topology/placement.h"

namespace braid::topology {

struct SearchOptions {
  int maxChannels = 32;
  /// NCCL_CROSS_NIC: 0 and 2 (the default) keep each channel on one rail, the same NIC index on
  /// every host, as a fabric with a switch per rail needs; 1 lets a ring leave a host by one NIC
  /// and enter the next by another (each rank uses the NIC nearest it). NCCL's 2 may cross where
  /// that is faster; this search does not weigh it (search.cc says why).
  int crossNic = 2;
  double channelCapGBs = 0;  ///< the most one channel can move; 0 = no limit
  long budget = 200000;      ///< search steps per order (order_search.h)
};

/// A step between hosts: the NICs it leaves and enters by.
struct NetHop {
  int fromRank = -1;
  int toRank = -1;
  int sendNic = -1;  ///< node index
  int recvNic = -1;
};

struct Ring {
  std::vector<int> order;   ///< order[i] sends to order[i + 1], the last to order[0]
  double bandwidthGBs = 0;  ///< what this channel moves; infinite when no link is crossed
  std::vector<NetHop> netHops;
};

struct RingPlan {
  std::vector<Ring> channels;
  double totalGBs() const;
};

Result<RingPlan> searchRings(const Graph& graph, const Paths& paths, const Placement& placement,
                             const SearchOptions& options);

struct TreeRank {
  int parent = -1;
  std::vector<int> children;
};

struct Tree {
  int root = -1;
  std::vector<TreeRank> ranks;           ///< by rank
  std::vector<std::vector<int>> chains;  ///< per host with ranks: its chain, head first
  std::vector<NetHop> netHops;           ///< edges between hosts, child to parent
  double bandwidthGBs = 0;               ///< the slowest edge, each edge taken alone
};

struct TreePlan {
  std::vector<Tree> trees;  ///< a tree per rail across hosts (at least two), or one when a
                            ///< single rank
};

Result<TreePlan> searchTrees(const Graph& graph, const Paths& paths, const Placement& placement,
                             const SearchOptions& options);

/// The ranks in the order of the machine: by host, then where their device
/// sits in the CPU/PCIe tree (a depth-first walk from each CPU in NUMA
/// order), then by rank.
std::vector<int> localityOrder(const Graph& graph, const Placement& placement);

/// The NIC each rank leaves its host by: the nearest to its device (paths.h
/// nearestNics); among equally near ones, the one fewest ranks before it
/// (in the order of the machine) took. -1 for a rank whose host has no NIC.
std::vector<int> assignNics(const Graph& graph, const Paths& paths, const Placement& placement);

/// The parent hosts in tree `tree` (0 or 1) of the double binary tree over
/// `count` hosts; -1 for the root.
std::vector<int> hostTreeParents(int count, int tree);

/// How many steps of ring `order` take a path of type `type` or worse.
int stepsAtLeast(const Paths& paths, const Placement& placement, const std::vector<int>& order,
                 PathType type);

}  // namespace braid::topology
