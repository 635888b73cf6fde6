// The symmetric kernels' cost model (tune/symmetric_cost.h): all_reduce runs one-shot for small
// messages and two-shot above, from a size that shrinks as the ranks grow, never two-shot on two
// ranks (it moves as many bytes there and pays its stores); blocks grow with the message up to
// the bound given.
#include <gtest/gtest.h>

#include "tune/symmetric_cost.h"

namespace braid::tune {
namespace {

/// The smallest power-of-two size from 8 B to 1 GiB at which all_reduce on `nranks` runs
/// two-shot, 0 for none.
size_t twoShotFrom(int nranks) {
  for (size_t bytes = 8; bytes <= (size_t{1} << 30); bytes *= 2) {
    if (chooseSymmetric(Collective::kAllReduce, bytes, nranks, 32).algorithm ==
        SymmetricAlgorithm::kTwoShot) {
      return bytes;
    }
  }
  return 0;
}

TEST(SymmetricCost, AllReduceIsOneShotWhenSmallAndTwoShotAbove) {
  EXPECT_EQ(twoShotFrom(2), 0u);
  size_t before = 0;
  for (int n : {8, 4, 3}) {
    const size_t from = twoShotFrom(n);
    ASSERT_GT(from, 8u) << n << " ranks: the one-shot must win the smallest messages";
    EXPECT_GT(from, before) << n << " ranks: fewer ranks move the crossover up";
    before = from;
    // Above the crossover it stays two-shot.
    for (size_t bytes = from; bytes <= (size_t{1} << 30); bytes *= 2) {
      EXPECT_EQ(chooseSymmetric(Collective::kAllReduce, bytes, n, 32).algorithm,
                SymmetricAlgorithm::kTwoShot)
          << n << " ranks, " << bytes << " bytes";
    }
  }
}

TEST(SymmetricCost, OtherCollectivesHaveOneKernelAndTimeGrowsWithBytes) {
  for (Collective c : {Collective::kAllGather, Collective::kReduceScatter}) {
    double last = 0;
    for (size_t bytes = 8; bytes <= (size_t{1} << 26); bytes *= 4) {
      const SymmetricEstimate e = chooseSymmetric(c, bytes, 4, 8);
      EXPECT_EQ(e.algorithm, SymmetricAlgorithm::kOneShot);
      EXPECT_GT(e.us, last);
      last = e.us;
    }
  }
}

TEST(SymmetricCost, BlocksGrowWithTheMessageUpToTheBound) {
  EXPECT_EQ(symmetricBlocks(8, 16), 1u);
  EXPECT_EQ(symmetricBlocks(kSymmetricBytesPerBlock, 16), 1u);
  EXPECT_EQ(symmetricBlocks(kSymmetricBytesPerBlock + 1, 16), 2u);
  EXPECT_EQ(symmetricBlocks(size_t{1} << 30, 16), 16u);
  EXPECT_EQ(symmetricBlocks(size_t{1} << 30, 0), 1u);
  EXPECT_STREQ(symmetricAlgorithmName(SymmetricAlgorithm::kTwoShot), "twoshot");
}

}  // namespace
}  // namespace braid::tune
