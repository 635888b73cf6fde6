// Which root of a communicator made from several unique ids (ncclCommInitRankScalable) meets
// which ranks: the ranks split into one contiguous block per root, the first nranks % nroots
// blocks one rank larger, as NCCL splits them, so that every rank finds its root by arithmetic
// alone. Each root answers the ranks of its block with their ring successors; the last rank's
// successor is the first rank of the next block, which tells this root its address (an
// introduction: bootstrap/root.h).
#pragma once

namespace braid::bootstrap {

/// The first rank of root `root`'s block; nranks for root == nroots.
inline int firstRankOfRoot(int root, int nranks, int nroots) {
  const int perRoot = nranks / nroots;
  const int larger = nranks % nroots;
  return root * perRoot + (root < larger ? root : larger);
}

/// How many ranks root `root` meets.
inline int ranksOfRoot(int root, int nranks, int nroots) {
  return firstRankOfRoot(root + 1, nranks, nroots) - firstRankOfRoot(root, nranks, nroots);
}

/// The root whose block holds `rank`.
inline int rootOfRank(int rank, int nranks, int nroots) {
  const int perRoot = nranks / nroots;
  const int larger = nranks % nroots;
  const int inLarger = larger * (perRoot + 1);
  if (rank < inLarger) return rank / (perRoot + 1);
  return (rank - inLarger) / perRoot + larger;
}

}  // namespace braid::bootstrap
