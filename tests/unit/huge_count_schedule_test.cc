// Counts above 2^31 elements, checked on the schedules alone (no buffers): every generator, for
// every rank, keeps each step inside its buffers, writes every element of the output it owns,
// and sends each peer the same sequence of counts that peer receives. An offset or count kept
// in 32 bits anywhere would wrap here and break one of the three.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "algo/ring.h"
#include "algo/tree.h"

namespace braid::algo {
namespace {

constexpr int kRanks = 4;
constexpr size_t kHuge = (size_t{1} << 31) + 12345;  // elements per rank (per block)

ScheduleSizes hugeSizes(int rank, size_t count) {
  ScheduleSizes s;
  s.nranks = kRanks;
  s.rank = rank;
  s.count = count;
  s.nchannels = 2;
  sizeForSlots(s, 512 << 10, 8, 4);  // the default FIFO: 8 slots of 512 KiB, float elements
  return s;
}

struct Extents {
  size_t input;
  size_t output;
  bool ownsOutput;  ///< every element of the output must be written
};

/// Checks one rank's schedule against its buffers; adds its sends and receives to `flows`.
void checkRank(const Schedule& s, const Extents& e,
               std::map<std::tuple<int, int, size_t>, std::vector<size_t>>* sent,
               std::map<std::tuple<int, int, size_t>, std::vector<size_t>>* received) {
  std::vector<std::pair<size_t, size_t>> written;
  for (size_t c = 0; c < s.channels.size(); ++c) {
    for (const Step& step : s.channels[c].steps) {
      if (step.count == 0) continue;
      if (stepReadsInput(step)) {
        ASSERT_LE(step.inOffset + step.count, e.input) << "rank " << s.rank << " reads past input";
      }
      if (stepWritesOutput(step.op) || stepReadsOutput(step)) {
        ASSERT_LE(step.outOffset + step.count, e.output)
            << "rank " << s.rank << " touches past output";
      }
      if (stepWritesOutput(step.op))
        written.push_back({step.outOffset, step.outOffset + step.count});
      if (step.sendPeer >= 0) (*sent)[{s.rank, step.sendPeer, c}].push_back(step.count);
      if (step.recvPeer >= 0) (*received)[{step.recvPeer, s.rank, c}].push_back(step.count);
    }
  }
  if (!e.ownsOutput) return;
  std::sort(written.begin(), written.end());
  size_t covered = 0;
  for (const auto& [from, to] : written) {
    ASSERT_LE(from, covered) << "rank " << s.rank << " never writes output [" << covered << ", "
                             << from << ")";
    covered = std::max(covered, to);
  }
  EXPECT_EQ(covered, e.output) << "rank " << s.rank << " leaves the output's end unwritten";
}

/// Generates every rank's schedule with `make` and checks them all.
void checkAllRanks(const std::function<Result<Schedule>(int rank)>& make,
                   const std::function<Extents(int rank)>& extents) {
  std::map<std::tuple<int, int, size_t>, std::vector<size_t>> sent, received;
  for (int r = 0; r < kRanks; ++r) {
    Result<Schedule> s = make(r);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s.value().count, kHuge);
    checkRank(s.value(), extents(r), &sent, &received);
  }
  EXPECT_EQ(sent, received) << "a peer receives other counts than it is sent";
}

RingParams ring(int rank) {
  RingParams p;
  static_cast<ScheduleSizes&>(p) = hugeSizes(rank, kHuge);
  return p;
}

TreeParams tree(int rank) {
  TreeParams p;
  static_cast<ScheduleSizes&>(p) = hugeSizes(rank, kHuge);
  return p;
}

constexpr int kRoot = 2;

TEST(HugeCounts, RingAllReduce) {
  checkAllRanks([](int r) { return ringAllReduce(ring(r)); },
                [](int) {
                  return Extents{kHuge, kHuge, true};
                });
}

TEST(HugeCounts, RingReduceScatter) {
  checkAllRanks([](int r) { return ringReduceScatter(ring(r)); },
                [](int) {
                  return Extents{kHuge * kRanks, kHuge, true};
                });
}

TEST(HugeCounts, RingAllGather) {
  checkAllRanks([](int r) { return ringAllGather(ring(r)); },
                [](int) {
                  return Extents{kHuge, kHuge * kRanks, true};
                });
}

TEST(HugeCounts, RingBroadcastAndReduce) {
  checkAllRanks([](int r) { return ringBroadcast(ring(r), kRoot); },
                [](int) {
                  return Extents{kHuge, kHuge, true};
                });
  checkAllRanks([](int r) { return ringReduce(ring(r), kRoot); },
                [](int r) {
                  return Extents{kHuge, kHuge, r == kRoot};
                });
}

TEST(HugeCounts, TreeAllReduceBroadcastAndReduce) {
  checkAllRanks([](int r) { return treeAllReduce(tree(r)); },
                [](int) {
                  return Extents{kHuge, kHuge, true};
                });
  checkAllRanks([](int r) { return treeBroadcast(tree(r), kRoot); },
                [](int) {
                  return Extents{kHuge, kHuge, true};
                });
  checkAllRanks([](int r) { return treeReduce(tree(r), kRoot); },
                [](int r) {
                  return Extents{kHuge, kHuge, r == kRoot};
                });
}

}  // namespace
}  // namespace braid::algo
