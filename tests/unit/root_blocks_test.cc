// How the ranks of a communicator made from several ids split among the ids' roots
// (bootstrap/root_blocks.h): contiguous blocks that cover every rank once, the first
// nranks % nroots of them one rank larger, and each rank's root the one whose block holds it.
#include <gtest/gtest.h>

#include "bootstrap/root_blocks.h"

namespace braid::bootstrap {
namespace root_blocks_test {

TEST(RootBlocks, BlocksCoverEveryRankOnceInOrder) {
  for (int nranks = 1; nranks <= 40; ++nranks) {
    for (int nroots = 1; nroots <= nranks; ++nroots) {
      EXPECT_EQ(firstRankOfRoot(0, nranks, nroots), 0);
      EXPECT_EQ(firstRankOfRoot(nroots, nranks, nroots), nranks);
      for (int root = 0; root < nroots; ++root) {
        const int first = firstRankOfRoot(root, nranks, nroots);
        const int count = ranksOfRoot(root, nranks, nroots);
        EXPECT_EQ(count, nranks / nroots + (root < nranks % nroots ? 1 : 0))
            << nranks << " ranks, " << nroots << " roots, root " << root;
        for (int rank = first; rank < first + count; ++rank) {
          EXPECT_EQ(rootOfRank(rank, nranks, nroots), root) << nranks << " / " << nroots;
        }
      }
    }
  }
}

TEST(RootBlocks, ThePyTorchShapes) {
  // 160 ranks from 2 ids: 80 each.
  EXPECT_EQ(rootOfRank(79, 160, 2), 0);
  EXPECT_EQ(rootOfRank(80, 160, 2), 1);
  EXPECT_EQ(firstRankOfRoot(1, 160, 2), 80);
  // 7 ranks from 3 ids: 3, 2, 2.
  EXPECT_EQ(ranksOfRoot(0, 7, 3), 3);
  EXPECT_EQ(firstRankOfRoot(2, 7, 3), 5);
  EXPECT_EQ(rootOfRank(4, 7, 3), 1);
}

}  // namespace root_blocks_test
}  // namespace braid::bootstrap
