// The zero-copy crossover (src/tune/zero_copy_crossover.h): the suffix rule
// on hand-made tables (zero-copy never faster, always faster, a tie, one
// noisy point either side of the crossover), the rule's definition checked on
// random tables, and medians of noisy repeats recovering the crossover of two
// cost lines.
#include "tune/zero_copy_crossover.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace braid::tune {
namespace {

// Sizes 4 KiB .. 16 MiB by factors of 2, as braid-calibrate sweeps them.
std::vector<size_t> sweepSizes() {
  std::vector<size_t> sizes;
  for (size_t b = 4 << 10; b <= (16u << 20); b *= 2) sizes.push_back(b);
  return sizes;
}

// A table where zero-copy's time over the FIFOs' is ratios[i] at sizes[i].
std::vector<ZeroCopyPoint> table(const std::vector<double>& ratios) {
  std::vector<ZeroCopyPoint> points;
  const std::vector<size_t> sizes = sweepSizes();
  EXPECT_LE(ratios.size(), sizes.size()) << "more ratios than the sweep has sizes";
  for (size_t i = 0; i < ratios.size() && i < sizes.size(); ++i) {
    const double fifo = 1.0 + sizes[i] / 1e4;
    points.push_back({sizes[i], fifo, fifo * ratios[i]});
  }
  return points;
}

TEST(ZeroCopyCrossover, EmptyTableHasNone) { EXPECT_EQ(zeroCopyCrossover({}), std::nullopt); }

TEST(ZeroCopyCrossover, NeverFasterHasNone) {
  EXPECT_EQ(zeroCopyCrossover(table({1.5, 1.4, 1.3, 1.2, 1.1, 1.05})), std::nullopt);
}

TEST(ZeroCopyCrossover, AlwaysFasterIsTheSmallestSize) {
  EXPECT_EQ(zeroCopyCrossover(table({0.9, 0.8, 0.7, 0.6, 0.5})), size_t{4 << 10});
}

TEST(ZeroCopyCrossover, ATieCountsForZeroCopy) {
  EXPECT_EQ(zeroCopyCrossover(table({1.2, 1.0, 1.0, 0.9})), size_t{8 << 10});
}

TEST(ZeroCopyCrossover, PlainCrossover) {
  EXPECT_EQ(zeroCopyCrossover(table({1.4, 1.2, 1.1, 0.95, 0.8, 0.7})), size_t{32 << 10});
}

TEST(ZeroCopyCrossover, OneNoisyWinBelowDoesNotPullItDown) {
  // Zero-copy wins at 8 KiB by chance, loses at 16 KiB, wins from 32 KiB on.
  EXPECT_EQ(zeroCopyCrossover(table({1.3, 0.98, 1.1, 0.95, 0.8, 0.7})), size_t{32 << 10});
}

TEST(ZeroCopyCrossover, OneNoisyLossAbovePushesItPastTheLoss) {
  // A loss at 64 KiB among wins: the threshold goes above it, to the FIFOs' side.
  EXPECT_EQ(zeroCopyCrossover(table({1.3, 1.1, 0.9, 0.8, 1.02, 0.7, 0.6})), size_t{128 << 10});
}

TEST(ZeroCopyCrossover, ALossAtTheLargestSizeMeansNone) {
  EXPECT_EQ(zeroCopyCrossover(table({1.3, 0.9, 0.8, 0.7, 1.01})), std::nullopt);
}

TEST(ZeroCopyCrossover, OrderOfThePointsDoesNotMatter) {
  std::vector<ZeroCopyPoint> points = table({1.4, 1.2, 0.9, 0.8, 0.7});
  std::reverse(points.begin(), points.end());
  EXPECT_EQ(zeroCopyCrossover(points), size_t{16 << 10});
}

// On random tables the answer meets the rule's definition: zero-copy at least
// as fast at the answer and every larger size, and slower at the size below.
TEST(ZeroCopyCrossover, RandomTablesMeetTheDefinition) {
  std::mt19937 rng(20261206);
  std::uniform_real_distribution<double> ratio(0.5, 1.5);
  // At most one ratio per size of the sweep (13): a fourteenth once read past its sizes, and
  // the garbage size it got there made the test pass or fail with what ran before it.
  std::uniform_int_distribution<int> count(1, static_cast<int>(sweepSizes().size()));
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<double> ratios(static_cast<size_t>(count(rng)));
    for (double& r : ratios) r = ratio(rng);
    const std::vector<ZeroCopyPoint> points = table(ratios);
    const std::optional<size_t> from = zeroCopyCrossover(points);
    if (!from) {
      EXPECT_GT(points.back().zeroCopyUs, points.back().fifoUs);
      continue;
    }
    for (size_t i = 0; i < points.size(); ++i) {
      const bool wins = points[i].zeroCopyUs <= points[i].fifoUs;
      if (points[i].bytes >= *from) {
        EXPECT_TRUE(wins) << "trial " << trial << " size " << i;
      }
      if (i + 1 < points.size() && points[i + 1].bytes == *from) {
        EXPECT_FALSE(wins) << "trial " << trial << " size " << i;
      }
    }
  }
}

// Two cost lines that cross at 160 KiB (zero-copy: more fixed cost, more
// bandwidth), each repeat jittered by up to 5% and one repeat in five of
// each size disturbed up to 3x (another process on the CPUs): the medians of
// five repeats put the crossover at 256 KiB, the first swept size above it.
TEST(ZeroCopyCrossover, MediansOfNoisyRepeatsFindTheLinesCrossover) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(0.95, 1.05);
  std::uniform_real_distribution<double> disturbance(1.5, 3.0);
  std::uniform_int_distribution<int> disturbed(0, 4);
  const double fifoBytesPerUs = 5e3, zeroCopyBytesPerUs = 10e3;
  const double fifoFixedUs = 2, crossover = 160 << 10;
  const double zeroCopyFixedUs =
      fifoFixedUs + crossover / fifoBytesPerUs - crossover / zeroCopyBytesPerUs;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<ZeroCopyPoint> points;
    for (size_t bytes : sweepSizes()) {
      std::vector<double> fifo, zeroCopy;
      const int slowFifo = disturbed(rng), slowZeroCopy = disturbed(rng);
      for (int r = 0; r < 5; ++r) {
        fifo.push_back((fifoFixedUs + bytes / fifoBytesPerUs) * jitter(rng) *
                       (r == slowFifo ? disturbance(rng) : 1.0));
        zeroCopy.push_back((zeroCopyFixedUs + bytes / zeroCopyBytesPerUs) * jitter(rng) *
                           (r == slowZeroCopy ? disturbance(rng) : 1.0));
      }
      points.push_back({bytes, medianOf(fifo), medianOf(zeroCopy)});
    }
    // At the nearest swept sizes zero-copy is 12% slower (128 KiB) and 18%
    // faster (256 KiB): more than 5% of jitter on each side can reverse.
    EXPECT_EQ(zeroCopyCrossover(points), size_t{256 << 10}) << "trial " << trial;
  }
}

TEST(ZeroCopyCrossover, MedianOf) {
  EXPECT_EQ(medianOf({}), 0);
  EXPECT_EQ(medianOf({3}), 3);
  EXPECT_EQ(medianOf({5, 1, 3}), 3);
  EXPECT_EQ(medianOf({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(medianOf({1, 100, 2, 2, 3}), 2);
}

}  // namespace
}  // namespace braid::tune
