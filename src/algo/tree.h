// Tree schedules: the double binary tree all-reduce and tree broadcast and
// reduce.
//
// The binary tree is NCCL's in-order tree over ranks 0..N-1: a rank's
// subtree is a contiguous range of ranks with the rank in its middle, its
// left child below it and its right child above it. Each node combines
// (left subtree op own input) op right subtree, so the tree fixes the
// association of every element's reduction: this is the order
// BRAID_DETERMINISTIC=1 makes every algorithm follow (canonicalFold).
//
// The double binary tree runs two such trees at once, each on half of the
// data: the second is the first mirrored (even N) or shifted by one (odd N),
// so that a rank that is a leaf in one tree is an inner node in the other
// and every rank sends and receives about the same amount. Both trees live
// in one channel; a rank takes a chunk of each in turn, ordered by its
// height in each tree so that what it receives was sent a turn earlier.
#pragma once

#include <cstddef>
#include <vector>

#include "algo/schedule.h"
#include "braid/status.h"

namespace braid::algo {

/// One rank's place in a tree: -1 where it has no such neighbour.
struct TreeNode {
  int parent = -1;
  int left = -1;   ///< child whose subtree holds lower ranks (in-order trees)
  int right = -1;  ///< child whose subtree holds higher ranks
};

/// The in-order binary tree of NCCL over ranks 0..nranks-1.
TreeNode inOrderTree(int nranks, int rank);
/// The root of inOrderTree(nranks, .).
int inOrderTreeRoot(int nranks);

/// The two trees of the double binary tree. With `sameShape` (deterministic
/// mode) both are the in-order tree, so every element is reduced in the
/// same order whichever half it falls in.
struct DoubleTree {
  TreeNode first;
  TreeNode second;
};
DoubleTree doubleBinaryTree(int nranks, int rank, bool sameShape);

/// A rank's place in a tree of any shape, as the topology plans trees
/// across hosts (NCCL's: a chain inside each host, a binary tree between the
/// hosts' heads, so a head has up to three children).
struct PlannedTreeNode {
  int parent = -1;
  std::vector<int> children;
};
/// One planned tree: every rank's node, by rank.
using PlannedTree = std::vector<PlannedTreeNode>;

/// The sizes (ScheduleSizes), and the tree's own options.
struct TreeParams : ScheduleSizes {
  bool deterministic = false;  ///< both trees in the in-order shape
  /// Trees the topology planned: all-reduce's channel c runs
  /// plannedTrees[c % size()] over its whole part. Empty, or in
  /// deterministic mode (where the in-order tree fixes every reduction's
  /// order): the double binary tree over ranks.
  std::vector<PlannedTree> plannedTrees;
};

/// All-reduce on the double binary tree: reduce up both trees, then
/// broadcast down them; or, with planned trees, each channel up and down
/// its own. In place means sendbuff == recvbuff.
Result<Schedule> treeAllReduce(const TreeParams& params);

/// Broadcast down a binary tree rooted at `root`. Only the root reads input.
Result<Schedule> treeBroadcast(const TreeParams& params, int root);

/// Reduce up a binary tree rooted at `root`. The root's output receives the
/// result; other ranks with two children keep partial results in theirs,
/// so a caller must give every rank an output of `count` elements (scratch
/// where NCCL lets non-roots pass none).
Result<Schedule> treeReduce(const TreeParams& params, int root);

/// The reduction of every rank's value in the in-order tree's order, for
/// callers that hold all of them (one-shot, deterministic ring):
/// fold(node) = (fold(left) op value(node)) op fold(right), from the root.
/// `value(rank)` returns rank's value and `combine(a, b)` returns a op b;
/// generic over the value type so that the same order serves real buffers
/// and the symbolic model.
template <typename Value, typename Combine>
auto foldInOrder(int nranks, const Value& value, const Combine& combine) -> decltype(value(0)) {
  auto fold = [&](auto& self, int rank) -> decltype(value(0)) {
    const TreeNode node = inOrderTree(nranks, rank);
    auto acc = value(rank);
    if (node.left >= 0) acc = combine(self(self, node.left), acc);
    if (node.right >= 0) acc = combine(acc, self(self, node.right));
    return acc;
  };
  return fold(fold, inOrderTreeRoot(nranks));
}

/// The tree's schedule of `collective` (`root` for broadcast and reduce): all-reduce, broadcast
/// and reduce have one; the others are an invalid argument.
Result<Schedule> treeSchedule(Collective collective, const TreeParams& params, int root);

}  // namespace braid::algo
