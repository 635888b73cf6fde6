// Tree schedules: the in-order binary tree, the double binary tree
// all-reduce, and tree broadcast and reduce.
//
// Every tree collective is a reduce phase, a broadcast phase, or the one and
// then the other, and each phase has dependencies in one direction only: up
// the tree while reducing, down it while broadcasting. Broadcast and reduce
// run one tree, and a rank takes its chunks in order, so every rank works
// through one global order of chunks; the earliest unfinished one can
// always advance, because the messages ahead of it on every connection
// belong to finished chunks, so these need no limit on how many FIFO slots
// one message takes. The all-reduce runs two trees in one channel and
// orders a rank's chunks by its place in each tree instead; its own
// argument, which does need such a limit, is at treeAllReduce.
#include "algo/tree.h"

#include <algorithm>
#include <string>

#include "algo/ring_common.h"

namespace braid::algo {
namespace {

int lowestBit(int x) { return x & -x; }

Status checkTreeParams(const TreeParams& p, const char* collective) {
  return checkSizes(p, std::string("tree ") + collective + ": ");
}

Schedule newTreeSchedule(const TreeParams& p, Collective collective, int root) {
  Schedule s = newSchedule(p, collective, root);
  // A slice is a quarter of a chunk, as on the ring, so that a node starts
  // forwarding before its child has sent the whole chunk.
  size_t slice = std::max((p.chunkElems + 3) / 4, p.minSliceElems);
  s.sliceElems = std::min(roundUpTo(slice, p.grainElems), p.maxSliceElems);
  return s;
}

Step treeStep(StepOp op, int from, int to, int chunk, size_t offset, size_t count,
              bool fromOutput = false) {
  return makeStep(op, from, to, chunk, offset, offset, count, fromOutput);
}

std::vector<int> childrenOf(const TreeNode& node) {
  std::vector<int> children;
  if (node.left >= 0) children.push_back(node.left);
  if (node.right >= 0) children.push_back(node.right);
  return children;
}

// One chunk of the reduce phase at a node: ((input op children[0]) op
// children[1]) ..., sent to the parent or, at the root, kept in the output;
// for a binary tree's node that is (left op input) op right. Partial
// results of a node with several children wait in its output between the
// receives.
void emitReduceChunk(std::vector<Step>& steps, int parent, const std::vector<int>& children,
                     int chunk, size_t offset, size_t count) {
  const bool root = parent < 0;
  const StepOp last = root ? StepOp::kRecvReduceCopy : StepOp::kRecvReduceSend;
  if (children.empty()) {
    steps.push_back(
        treeStep(root ? StepOp::kCopy : StepOp::kSend, -1, parent, chunk, offset, count));
    return;
  }
  for (size_t i = 0; i + 1 < children.size(); ++i) {
    steps.push_back(treeStep(StepOp::kRecvReduceCopy, children[i], -1, chunk, offset, count,
                             /*fromOutput=*/i > 0));
  }
  steps.push_back(treeStep(last, children.back(), parent, chunk, offset, count,
                           /*fromOutput=*/children.size() > 1));
}

// One chunk of the broadcast phase at a node whose output already holds the
// chunk (the root after reducing) or receives it from the parent.
void emitBroadcastChunk(std::vector<Step>& steps, int parent, const std::vector<int>& children,
                        int chunk, size_t offset, size_t count, bool rootReadsInput) {
  size_t first = 0;
  if (parent >= 0) {
    if (children.empty()) {
      steps.push_back(treeStep(StepOp::kRecv, parent, -1, chunk, offset, count));
      return;
    }
    steps.push_back(treeStep(StepOp::kRecvCopySend, parent, children[0], chunk, offset, count));
    first = 1;
  } else if (rootReadsInput) {
    // Broadcast's root: its output is a copy of its input.
    if (children.empty()) {
      steps.push_back(treeStep(StepOp::kCopy, -1, -1, chunk, offset, count));
      return;
    }
    steps.push_back(treeStep(StepOp::kCopySend, -1, children[0], chunk, offset, count));
    first = 1;
  }
  for (size_t c = first; c < children.size(); ++c) {
    steps.push_back(treeStep(StepOp::kSend, -1, children[c], chunk, offset, count, true));
  }
}

// A tree over ranks relabelled so that `root` is the in-order tree's root.
TreeNode rootedTree(int nranks, int rank, int root) {
  auto label = [&](int r) { return ringMod(r - root, nranks); };
  auto unlabel = [&](int l) { return l < 0 ? -1 : ringMod(l + root, nranks); };
  TreeNode t = inOrderTree(nranks, label(rank));
  return {unlabel(t.parent), unlabel(t.left), unlabel(t.right)};
}

Status checkTreeRoot(const TreeParams& p, int root, const char* collective) {
  return checkRoot(p, root, std::string("tree ") + collective + ": ");
}

// The rooted collectives: each channel's part in chunks, one phase.
enum class Phase { kReduce, kBroadcast };

Result<Schedule> rootedTreeSchedule(const TreeParams& p, int root, Collective collective,
                                    const char* name, Phase phase) {
  BRAID_TRY(checkTreeParams(p, name));
  BRAID_TRY(checkTreeRoot(p, root, name));
  Schedule s = newTreeSchedule(p, collective, root);
  const TreeNode node = rootedTree(p.nranks, p.rank, root);
  for (int c = 0; c < p.nchannels; ++c) {
    const ElemRange range = channelRange(p.count, p.nchannels, c, p.grainElems);
    auto& steps = s.channels[c].steps;
    int chunk = 0;
    for (size_t at = range.begin; at < range.end; at += p.chunkElems, ++chunk) {
      const size_t n = std::min(p.chunkElems, range.end - at);
      if (phase == Phase::kReduce) {
        emitReduceChunk(steps, node.parent, childrenOf(node), chunk, at, n);
      } else {
        emitBroadcastChunk(steps, node.parent, childrenOf(node), chunk, at, n, true);
      }
    }
  }
  return s;
}

}  // namespace

// NCCL's binary tree: rank 0 is the root with one child; below it, the node
// at r with lowest set bit b covers ranks (r - b, r + b), with children
// r - b/2 and r + b/2 (or the nearest existing rank above). So each subtree
// is a contiguous range with its node inside, left below and right above.
TreeNode inOrderTree(int nranks, int rank) {
  TreeNode t;
  if (nranks <= 1) return t;
  int top = 1;
  while (top < nranks) top <<= 1;
  if (rank == 0) {
    t.right = top >> 1;
    return t;
  }
  const int low = lowestBit(rank);
  int up = (rank ^ low) | (low << 1);
  if (up >= nranks) up = rank ^ low;
  t.parent = up;
  int half = low >> 1;
  if (half == 0) return t;
  t.left = rank - half;
  while (half > 0 && rank + half >= nranks) half >>= 1;
  t.right = half > 0 ? rank + half : -1;
  return t;
}

int inOrderTreeRoot(int /*nranks*/) { return 0; }

// The second tree, as NCCL builds it: the first mirrored when N is even and
// shifted by one rank when N is odd. Leaves of the in-order tree are odd
// ranks; either map sends them to even ranks, inner nodes of the first.
DoubleTree doubleBinaryTree(int nranks, int rank, bool sameShape) {
  DoubleTree d;
  d.first = inOrderTree(nranks, rank);
  if (sameShape) {
    d.second = d.first;
    return d;
  }
  const bool mirror = nranks % 2 == 0;
  auto toLabel = [&](int r) { return mirror ? nranks - 1 - r : ringMod(r - 1, nranks); };
  auto toRank = [&](int l) {
    if (l < 0) return -1;
    return mirror ? nranks - 1 - l : ringMod(l + 1, nranks);
  };
  const TreeNode t = inOrderTree(nranks, toLabel(rank));
  d.second = {toRank(t.parent), toRank(t.left), toRank(t.right)};
  return d;
}

namespace {

// Hops from p.rank up to the root of tree `tree` (0 or 1) of the double tree.
int heightIn(const TreeParams& p, int tree) {
  int hops = 0;
  for (int r = p.rank;;) {
    const DoubleTree d = doubleBinaryTree(p.nranks, r, p.deterministic);
    const int up = tree == 0 ? d.first.parent : d.second.parent;
    if (up < 0) return hops;
    ++hops;
    r = up;
  }
}

// Planned trees checked: one node per rank, each parent naming the rank as
// its child, and every rank reaching one root.
Status checkPlannedTrees(const TreeParams& p) {
  const std::string who = "tree all_reduce: planned tree ";
  for (size_t t = 0; t < p.plannedTrees.size(); ++t) {
    const PlannedTree& tree = p.plannedTrees[t];
    const std::string name = who + std::to_string(t);
    if (static_cast<int>(tree.size()) != p.nranks) {
      return invalidArgument(name + " has " + std::to_string(tree.size()) + " nodes, expected " +
                             std::to_string(p.nranks));
    }
    int roots = 0;
    for (int r = 0; r < p.nranks; ++r) {
      const int parent = tree[r].parent;
      if (parent < 0) {
        ++roots;
        continue;
      }
      const std::vector<int>& siblings =
          parent < p.nranks ? tree[parent].children : tree[r].children;
      if (parent >= p.nranks || std::find(siblings.begin(), siblings.end(), r) == siblings.end()) {
        return invalidArgument(name + ": rank " + std::to_string(r) + "'s parent " +
                               std::to_string(parent) + " does not list it as a child");
      }
      int hops = 0;
      for (int up = r; up >= 0 && hops <= p.nranks; up = tree[up].parent) ++hops;
      if (hops > p.nranks)
        return invalidArgument(name + " has a cycle through rank " + std::to_string(r));
    }
    if (roots != 1) return invalidArgument(name + " has " + std::to_string(roots) + " roots");
  }
  return Status::success();
}

// Each channel up and down one planned tree: the reduce phase chunk by
// chunk, then the broadcast phase. Each connection then carries one phase
// only (child to parent while reducing, parent to child while
// broadcasting) and every rank takes the chunks in one global order, so, as
// for the rooted collectives, the earliest unfinished chunk can always
// advance.
Result<Schedule> plannedTreeAllReduce(const TreeParams& p) {
  BRAID_TRY(checkPlannedTrees(p));
  Schedule s = newTreeSchedule(p, Collective::kAllReduce, -1);
  for (int c = 0; c < p.nchannels; ++c) {
    const PlannedTreeNode& node = p.plannedTrees[c % p.plannedTrees.size()][p.rank];
    const ElemRange range = channelRange(p.count, p.nchannels, c, p.grainElems);
    auto& steps = s.channels[c].steps;
    for (int phase = 0; phase < 2; ++phase) {
      int chunk = 0;
      for (size_t at = range.begin; at < range.end; at += p.chunkElems, ++chunk) {
        const size_t n = std::min(p.chunkElems, range.end - at);
        if (phase == 0) {
          emitReduceChunk(steps, node.parent, node.children, chunk, at, n);
        } else {
          emitBroadcastChunk(steps, node.parent, node.children, chunk, at, n, false);
        }
      }
    }
  }
  return s;
}

}  // namespace

// Each channel's part is cut in two halves, one per tree, and both halves
// into chunks. One agent runs both trees, and the root of one tree is a
// leaf of the other, so any one order of (tree, chunk) tasks shared by all
// ranks couples them: where a is b's child in one tree and b is a's child
// in the other, a cannot send its next chunk of the first tree before b
// has sent it the chunk of the second, which b does only after the rest of
// its own turn, so a and b take their turns one after the other.
//
// Instead a rank takes its tasks in slots, each slot one chunk of each
// tree, and its place in a tree sets which chunk: while reducing, chunk k of
// a tree at slot k + depth - h, where h is the rank's height (hops below
// the root); while broadcasting, at slot k + h. Every message is then sent
// in one slot and received in the next, so in a full pipeline a rank finds
// what it receives already waiting in its FIFO. This cannot deadlock when a
// message takes at most half of a connection's FIFO slots and no connection
// carries two messages in one slot: take the blocked rank at the earliest
// slot s. A receive there waits for a sender behind slot s, which is
// impossible. So every rank at slot s waits to send, on a FIFO holding
// more than a message, so a message of slot s - 2 or earlier is unread,
// and its receiver is behind slot s - 1, earlier than s again. The two
// trees link two ranks in the same direction only for three ranks (the
// tests check up to 2100), and trees of one shape (deterministic mode) link
// all of them so; there one tree runs over the whole part.
Result<Schedule> treeAllReduce(const TreeParams& p) {
  BRAID_TRY(checkTreeParams(p, "all_reduce"));
  if (!p.deterministic && !p.plannedTrees.empty()) return plannedTreeAllReduce(p);
  Schedule s = newTreeSchedule(p, Collective::kAllReduce, -1);
  // A message takes at most half of the FIFO, for the argument above.
  const size_t chunkElems = std::min(p.chunkElems, kMaxSlicesPerMessage * s.sliceElems);
  const bool oneTree = p.deterministic || p.nranks == 3;
  const DoubleTree trees = doubleBinaryTree(p.nranks, p.rank, p.deterministic);
  const TreeNode nodes[2] = {trees.first, trees.second};
  int depth = 0;
  while ((1 << depth) < p.nranks) ++depth;
  const int heights[2] = {heightIn(p, 0), heightIn(p, 1)};
  for (int c = 0; c < p.nchannels; ++c) {
    const ElemRange range = channelRange(p.count, p.nchannels, c, p.grainElems);
    auto& steps = s.channels[c].steps;
    const size_t len = range.end - range.begin;
    // What fits one chunk takes one tree: two halves would each pay the
    // trees' whole depth of hops for half the bytes.
    const size_t firstHalf =
        oneTree || len <= chunkElems ? len : std::min(len, roundUpTo((len + 1) / 2, p.grainElems));
    const ElemRange halves[2] = {{range.begin, range.begin + firstHalf},
                                 {range.begin + firstHalf, range.end}};
    const size_t chunks = (firstHalf + chunkElems - 1) / chunkElems;
    // Runs chunk k of tree t in the given phase, if the half has one.
    auto emit = [&](int phase, int t, size_t k) {
      const size_t at = halves[t].begin + k * chunkElems;
      if (k >= chunks || at >= halves[t].end) return;
      const size_t n = std::min(chunkElems, halves[t].end - at);
      const int chunk = static_cast<int>(2 * k + t);
      if (phase == 0) {
        emitReduceChunk(steps, nodes[t].parent, childrenOf(nodes[t]), chunk, at, n);
      } else {
        emitBroadcastChunk(steps, nodes[t].parent, childrenOf(nodes[t]), chunk, at, n, false);
      }
    };
    for (int phase = 0; phase < 2; ++phase) {
      for (size_t slot = 0; slot < chunks + depth; ++slot) {
        for (int t = 0; t < 2; ++t) {
          const size_t offset = static_cast<size_t>(phase == 0 ? depth - heights[t] : heights[t]);
          if (slot >= offset) emit(phase, t, slot - offset);
        }
      }
    }
  }
  return s;
}

Result<Schedule> treeBroadcast(const TreeParams& p, int root) {
  return rootedTreeSchedule(p, root, Collective::kBroadcast, "broadcast", Phase::kBroadcast);
}

Result<Schedule> treeReduce(const TreeParams& p, int root) {
  return rootedTreeSchedule(p, root, Collective::kReduce, "reduce", Phase::kReduce);
}

Result<Schedule> treeSchedule(Collective collective, const TreeParams& params, int root) {
  switch (collective) {
    case Collective::kAllReduce:
      return treeAllReduce(params);
    case Collective::kBroadcast:
      return treeBroadcast(params, root);
    case Collective::kReduce:
      return treeReduce(params, root);
    default:
      return invalidArgument(std::string("the tree has no schedule for ") +
                             collectiveName(collective));
  }
}

}  // namespace braid::algo
