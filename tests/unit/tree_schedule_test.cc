// The tree generators, checked symbolically for 1 to 64 ranks on braid-sim's
// model of schedules on FIFOs (tools/sim/symbolic_check.h: a schedule that
// could deadlock on the real FIFOs gets stuck there), out of place and in
// place, with every rank's output checked element by element. A value counts
// every contribution it holds and says which element it is, so a
// contribution counted twice or missed, or one taken from the wrong element,
// shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "algo/tree.h"
#include "symbolic_check.h"

namespace braid::algo::tree_schedule_test {
namespace {

struct Shape {
  size_t chunk;
  size_t slice;
  int channels;
};

// One chunk of one slice; small chunks of several slices (many pipelined
// chunks); several channels; slices larger than chunks.
const Shape kShapes[] = {{1 << 20, 1 << 20, 1}, {16, 5, 1}, {9, 2, 2}, {40, 64, 3}};

struct Call {
  Collective collective;
  int nranks;
  size_t count;
  Shape shape;
  int root = 0;
  bool inPlace = false;
  bool deterministic = false;
  std::vector<PlannedTree> plannedTrees = {};
};

std::string describe(const Call& c) {
  return std::string(collectiveName(c.collective)) + " nranks " + std::to_string(c.nranks) +
         " count " + std::to_string(c.count) + " chunk " + std::to_string(c.shape.chunk) +
         " slice " + std::to_string(c.shape.slice) + " channels " +
         std::to_string(c.shape.channels) + " root " + std::to_string(c.root) +
         (c.inPlace ? " in place" : " out of place") + (c.deterministic ? " deterministic" : "");
}

Result<Schedule> generate(const Call& c, int rank) {
  TreeParams p;
  p.nranks = c.nranks;
  p.rank = rank;
  p.count = c.count;
  p.chunkElems = c.shape.chunk;
  p.maxSliceElems = c.shape.slice;
  p.nchannels = c.shape.channels;
  p.deterministic = c.deterministic;
  p.plannedTrees = c.plannedTrees;
  switch (c.collective) {
    case Collective::kAllReduce:
      return treeAllReduce(p);
    case Collective::kBroadcast:
      return treeBroadcast(p, c.root);
    case Collective::kReduce:
      return treeReduce(p, c.root);
    default:
      return internalError("no tree schedule for this collective");
  }
}

// What rank r's output must hold: the root's input after a broadcast, every
// contribution after an all-reduce and at a reduce's root; nothing checked
// at a reduce's other ranks, which use their output as scratch.
std::optional<sim::Value> expected(const Call& c, int r, const sim::RankKeys& keys) {
  sim::Value v;
  if (c.collective == Collective::kBroadcast) {
    sim::appendPiece(v, {c.count, 0, keys.single(c.root)});
  } else if (c.collective == Collective::kAllReduce || r == c.root) {
    sim::appendPiece(v, {c.count, 0, keys.all()});
  } else {
    return std::nullopt;
  }
  return v;
}

void check(const Call& c) {
  SCOPED_TRACE(describe(c));
  std::vector<Schedule> schedules;
  std::vector<sim::BufferLayout> layouts;
  for (int r = 0; r < c.nranks; ++r) {
    auto s = generate(c, r);
    ASSERT_TRUE(s.ok()) << s.status().message();
    schedules.push_back(std::move(s).value());
    layouts.push_back(c.inPlace ? sim::oneBuffer(c.count, 0, c.count, 0, c.count)
                                : sim::separateBuffers(c.count, c.count));
  }
  auto want = [&c](int r, const sim::RankKeys& keys) { return expected(c, r, keys); };
  auto run = sim::checkOnBuffers(schedules, layouts, want);
  ASSERT_TRUE(run.ok()) << run.status().message();
  const bool everyRank = c.collective != Collective::kReduce;
  ASSERT_EQ(run.value().ranksChecked, everyRank ? static_cast<uint64_t>(c.nranks) : 1u);
}

const size_t kCounts[] = {0, 1, 2, 7, 97, 1000};

class TreeModel : public ::testing::TestWithParam<int> {};

TEST_P(TreeModel, AllReduceEveryShapeInAndOutOfPlace) {
  const int n = GetParam();
  for (size_t count : kCounts) {
    for (const Shape& shape : kShapes) {
      for (bool inPlace : {false, true}) {
        for (bool det : {false, true}) {
          check({Collective::kAllReduce, n, count, shape, 0, inPlace, det});
        }
      }
    }
  }
}

TEST_P(TreeModel, BroadcastAndReduceFromAssortedRoots) {
  const int n = GetParam();
  std::set<int> roots = {0, n / 2, n - 1};
  if (n <= 8) {
    for (int r = 0; r < n; ++r) roots.insert(r);
  }
  for (int root : roots) {
    for (size_t count : {size_t(1), size_t(97), size_t(1000)}) {
      for (const Shape& shape : kShapes) {
        for (bool inPlace : {false, true}) {
          check({Collective::kBroadcast, n, count, shape, root, inPlace});
          check({Collective::kReduce, n, count, shape, root, inPlace});
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks1To64, TreeModel, ::testing::Range(1, 65));

// Parent and child links agree, every rank hangs under the root, and each
// subtree is a contiguous range of ranks with its node between the left and
// the right subtree (which is what makes the fold order the in-order one).
TEST(InOrderTree, IsAConsistentInOrderBinaryTree) {
  for (int n = 1; n <= 300; ++n) {
    SCOPED_TRACE("nranks " + std::to_string(n));
    int roots = 0;
    for (int r = 0; r < n; ++r) {
      const TreeNode t = inOrderTree(n, r);
      if (t.parent < 0) {
        ++roots;
        EXPECT_EQ(r, inOrderTreeRoot(n));
      } else {
        const TreeNode p = inOrderTree(n, t.parent);
        EXPECT_TRUE(p.left == r || p.right == r) << "rank " << r;
      }
      if (t.left >= 0) {
        EXPECT_LT(t.left, r);
        EXPECT_EQ(inOrderTree(n, t.left).parent, r);
      }
      if (t.right >= 0) {
        EXPECT_GT(t.right, r);
        EXPECT_LT(t.right, n);
        EXPECT_EQ(inOrderTree(n, t.right).parent, r);
      }
    }
    EXPECT_EQ(roots, 1);
    // The in-order walk from the root visits 0, 1, ..., n-1.
    std::vector<int> walk;
    auto visit = [&](auto& self, int r) -> void {
      if (r < 0) return;
      const TreeNode t = inOrderTree(n, r);
      self(self, t.left);
      walk.push_back(r);
      self(self, t.right);
    };
    visit(visit, inOrderTreeRoot(n));
    ASSERT_EQ(walk.size(), static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) EXPECT_EQ(walk[r], r);
  }
}

TEST(InOrderTree, DepthGrowsWithLogN) {
  for (int n : {2, 8, 64, 1000, 4096}) {
    int depth = 0;
    for (int r = 0; r < n; ++r) {
      int d = 0;
      for (int at = r; inOrderTree(n, at).parent >= 0; at = inOrderTree(n, at).parent) ++d;
      depth = std::max(depth, d);
    }
    int log2 = 0;
    while ((1 << log2) < n) ++log2;
    EXPECT_LE(depth, log2) << "nranks " << n;
  }
}

// The point of the second tree: a leaf of one is an inner node of the other
// (for all but a rank or two), so both halves keep every rank's links busy.
TEST(DoubleBinaryTree, LeavesOfOneTreeAreInnerNodesOfTheOther) {
  for (int n : {4, 5, 8, 9, 16, 33, 64}) {
    int leafInBoth = 0;
    for (int r = 0; r < n; ++r) {
      const DoubleTree d = doubleBinaryTree(n, r, false);
      const bool leaf1 = d.first.left < 0 && d.first.right < 0;
      const bool leaf2 = d.second.left < 0 && d.second.right < 0;
      if (leaf1 && leaf2) ++leafInBoth;
    }
    EXPECT_LE(leafInBoth, 2) << "nranks " << n;
  }
}

TEST(DoubleBinaryTree, DeterministicModeUsesOneShapeForBoth) {
  for (int n : {2, 7, 8}) {
    for (int r = 0; r < n; ++r) {
      const DoubleTree d = doubleBinaryTree(n, r, true);
      const TreeNode t = inOrderTree(n, r);
      EXPECT_EQ(d.first.parent, t.parent);
      EXPECT_EQ(d.second.parent, t.parent);
      EXPECT_EQ(d.second.left, t.left);
      EXPECT_EQ(d.second.right, t.right);
    }
  }
}

// The all-reduce cannot deadlock because no connection carries two messages
// of one slot (tree.cc): beyond three ranks, the two trees never link the
// same two ranks in the same direction.
TEST(DoubleBinaryTree, NoTwoRanksAreLinkedTheSameWayInBothTrees) {
  for (int n = 4; n <= 2100; ++n) {
    for (int r = 0; r < n; ++r) {
      const DoubleTree d = doubleBinaryTree(n, r, false);
      if (d.first.parent >= 0) {
        ASSERT_NE(d.first.parent, d.second.parent) << "nranks " << n << " rank " << r;
      }
    }
  }
  // Three ranks: 2 -> 0 in both, which is why the all-reduce takes one tree there.
  EXPECT_EQ(doubleBinaryTree(3, 2, false).first.parent, 0);
  EXPECT_EQ(doubleBinaryTree(3, 2, false).second.parent, 0);
}

// The other half of the same argument: a message takes at most half of the
// FIFO's slots, whatever chunk the caller asks for.
TEST(TreeSchedules, AllReduceMessagesTakeAtMostHalfTheFifo) {
  for (const Shape& shape : kShapes) {
    for (int n : {2, 3, 8, 13}) {
      for (int r = 0; r < n; ++r) {
        TreeParams p;
        p.nranks = n;
        p.rank = r;
        p.count = 1000;
        p.chunkElems = shape.chunk;
        p.maxSliceElems = shape.slice;
        p.nchannels = shape.channels;
        Result<Schedule> s = treeAllReduce(p);
        ASSERT_TRUE(s.ok()) << s.status().message();
        for (const ChannelSchedule& channel : s.value().channels) {
          for (const Step& step : channel.steps) {
            ASSERT_LE(step.count, 4 * s.value().sliceElems)
                << "nranks " << n << " rank " << r << " chunk " << shape.chunk << " slice "
                << shape.slice;
          }
        }
      }
    }
  }
}

// foldInOrder's association is the tree's: a string fold shows the brackets.
TEST(FoldInOrder, FollowsTheTreeAssociation) {
  auto name = [](int r) { return std::to_string(r); };
  auto join = [](const std::string& a, const std::string& b) { return "(" + a + "+" + b + ")"; };
  EXPECT_EQ(foldInOrder(1, name, join), "0");
  EXPECT_EQ(foldInOrder(2, name, join), "(0+1)");
  EXPECT_EQ(foldInOrder(4, name, join), "(0+((1+2)+3))");
  EXPECT_EQ(foldInOrder(5, name, join), "(0+(((1+2)+3)+4))");
}

// Trees as the topology plans them across 3 hosts of 3 ranks: a chain in
// each host from its head, and a tree between the heads, so a head has three
// children. The second tree starts each chain at the middle rank.
PlannedTree plannedTree(const std::vector<std::vector<int>>& chains, int rootHost) {
  PlannedTree tree(9);
  auto link = [&](int parent, int child) {
    tree[child].parent = parent;
    tree[parent].children.push_back(child);
  };
  for (const std::vector<int>& chain : chains) {
    for (size_t i = 1; i < chain.size(); ++i) link(chain[i - 1], chain[i]);
  }
  for (int h = 0; h < 3; ++h) {
    if (h != rootHost) link(chains[rootHost][0], chains[h][0]);
  }
  return tree;
}

const std::vector<PlannedTree> kPlannedTrees = {plannedTree({{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}, 0),
                                                plannedTree({{1, 0, 2}, {4, 3, 5}, {7, 6, 8}}, 1)};

TEST(PlannedTrees, AllReduceOnTheTopologysTreesEveryShape) {
  for (const Shape& shape : kShapes) {
    for (size_t count : kCounts) {
      for (bool inPlace : {false, true}) {
        check({Collective::kAllReduce, 9, count, shape, 0, inPlace, false, kPlannedTrees});
      }
    }
  }
}

TEST(PlannedTrees, EachChannelRunsItsTreeAndDeterministicModeIgnoresThem) {
  Call c{Collective::kAllReduce, 9, 1000, {40, 64, 3}};
  c.plannedTrees = kPlannedTrees;
  for (int rank = 0; rank < 9; ++rank) {
    auto s = generate(c, rank);
    ASSERT_TRUE(s.ok()) << s.status().message();
    for (int ch = 0; ch < 3; ++ch) {
      const PlannedTreeNode& node = kPlannedTrees[ch % 2][rank];
      for (const Step& step : s.value().channels[ch].steps) {
        for (int peer : {step.recvPeer, step.sendPeer}) {
          if (peer < 0) continue;
          const bool linked =
              peer == node.parent ||
              std::find(node.children.begin(), node.children.end(), peer) != node.children.end();
          EXPECT_TRUE(linked) << "rank " << rank << " channel " << ch << " talks to " << peer;
        }
      }
    }
  }
  // Deterministic mode keeps the in-order tree, whose order every algorithm follows.
  c.deterministic = true;
  Call inOrder = c;
  inOrder.plannedTrees = {};
  for (int rank = 0; rank < 9; ++rank) {
    EXPECT_EQ(formatSchedule(generate(c, rank).value(), DataType::kFloat32),
              formatSchedule(generate(inOrder, rank).value(), DataType::kFloat32));
  }
}

TEST(PlannedTrees, MalformedTreesAreRejected) {
  TreeParams p;
  p.nranks = 9;
  p.count = 10;
  p.chunkElems = 4;
  p.maxSliceElems = 4;
  p.plannedTrees = {kPlannedTrees[0]};
  p.plannedTrees[0].pop_back();
  EXPECT_NE(treeAllReduce(p).status().message().find("has 8 nodes, expected 9"), std::string::npos);
  p.plannedTrees = {kPlannedTrees[0]};
  p.plannedTrees[0][4].parent = 6;  // 6 does not list 4
  EXPECT_NE(treeAllReduce(p).status().message().find("rank 4's parent 6"), std::string::npos);
  p.plannedTrees = {kPlannedTrees[0]};
  p.plannedTrees[0][3].parent = -1;  // a second root
  EXPECT_NE(treeAllReduce(p).status().message().find("2 roots"), std::string::npos);
}

TEST(TreeSchedules, BadParametersAreRejected) {
  TreeParams p;
  p.nranks = 4;
  p.rank = 4;
  p.count = 10;
  EXPECT_FALSE(treeAllReduce(p).ok());
  p.rank = 1;
  p.chunkElems = 0;
  EXPECT_FALSE(treeAllReduce(p).ok());
  p.chunkElems = 4;
  auto bad = treeBroadcast(p, 4);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("root 4"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(treeReduce(p, -1).ok());
  p.nchannels = 0;
  EXPECT_FALSE(treeAllReduce(p).ok());
}

}  // namespace
}  // namespace braid::algo::tree_schedule_test
