// Schedules sized by sizeForSlots put every bound between channels, chunks and slices on a
// 16-byte pack (ScheduleSizes::grainElems): counts that no channel or chunk divides evenly (odd
// ones, primes) still give the engine's loops slices that start on a pack wherever the buffer
// does, so a GPU moves them with vector loads, not element by element. Checked on every
// generator, rank, type width and channel count, on the schedules alone.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "algo/ring.h"
#include "algo/tree.h"

namespace braid::algo {
namespace {

constexpr size_t kSlotBytes = 512 << 10;  // the default FIFO: 8 slots of 512 KiB

template <typename Params>
Params sized(int nranks, int rank, size_t count, int nchannels, size_t elemBytes) {
  Params p;
  p.nranks = nranks;
  p.rank = rank;
  p.count = count;
  p.nchannels = nchannels;
  sizeForSlots(p, kSlotBytes, 8, elemBytes);
  return p;
}

/// Every step's offsets, taken within its block of `count` elements, and the slice fall on
/// the grain: so does every slice's start.
void expectOnGrain(const Schedule& s, size_t count, size_t grain, const std::string& what) {
  EXPECT_EQ(s.sliceElems % grain, 0u) << what << ": slice of " << s.sliceElems;
  for (size_t c = 0; c < s.channels.size(); ++c) {
    for (const Step& step : s.channels[c].steps) {
      if (step.count == 0) continue;
      EXPECT_EQ(step.inOffset % count % grain, 0u)
          << what << ", channel " << c << ": input offset " << step.inOffset;
      EXPECT_EQ(step.outOffset % count % grain, 0u)
          << what << ", channel " << c << ": output offset " << step.outOffset;
    }
  }
}

using Make = std::function<Result<Schedule>(int nranks, int rank, size_t count, int channels,
                                            size_t elemBytes)>;

void checkGenerator(const char* name, const Make& make) {
  for (size_t elemBytes : {1, 2, 4, 8}) {
    const size_t grain = 16 / elemBytes;
    for (int nranks : {2, 3, 5}) {
      for (int channels : {1, 3, 8}) {
        for (size_t count : {size_t{1} << 20 | 1, size_t{999983}, size_t{4099}, size_t{37}}) {
          for (int rank = 0; rank < nranks; ++rank) {
            Result<Schedule> s = make(nranks, rank, count, channels, elemBytes);
            ASSERT_TRUE(s.ok()) << s.status().message();
            expectOnGrain(s.value(), count, grain,
                          std::string(name) + " of " + std::to_string(count) + " x " +
                              std::to_string(elemBytes) + " B, " + std::to_string(nranks) +
                              " ranks, " + std::to_string(channels) + " channels, rank " +
                              std::to_string(rank));
            if (::testing::Test::HasFailure()) return;
          }
        }
      }
    }
  }
}

TEST(PackGrainSchedule, SizeForSlotsSetsTheElementsOfOnePack) {
  for (size_t elemBytes : {1, 2, 4, 8}) {
    ScheduleSizes s;
    sizeForSlots(s, kSlotBytes, 8, elemBytes);
    EXPECT_EQ(s.grainElems, 16 / elemBytes) << elemBytes << "-byte elements";
  }
  ScheduleSizes tiny;  // slots too small for whole packs: no grain to keep
  sizeForSlots(tiny, 12, 8, 4);
  EXPECT_EQ(tiny.grainElems, 1u);
}

TEST(PackGrainSchedule, RingBoundsFallOnPacks) {
  checkGenerator("ring all_reduce", [](int n, int r, size_t count, int ch, size_t eb) {
    return ringAllReduce(sized<RingParams>(n, r, count, ch, eb));
  });
  checkGenerator("ring reduce_scatter", [](int n, int r, size_t count, int ch, size_t eb) {
    return ringReduceScatter(sized<RingParams>(n, r, count, ch, eb));
  });
  checkGenerator("ring all_gather", [](int n, int r, size_t count, int ch, size_t eb) {
    return ringAllGather(sized<RingParams>(n, r, count, ch, eb));
  });
  checkGenerator("ring broadcast", [](int n, int r, size_t count, int ch, size_t eb) {
    return ringBroadcast(sized<RingParams>(n, r, count, ch, eb), n - 1);
  });
  checkGenerator("ring reduce", [](int n, int r, size_t count, int ch, size_t eb) {
    return ringReduce(sized<RingParams>(n, r, count, ch, eb), 0);
  });
}

TEST(PackGrainSchedule, TreeBoundsFallOnPacks) {
  checkGenerator("tree all_reduce", [](int n, int r, size_t count, int ch, size_t eb) {
    return treeAllReduce(sized<TreeParams>(n, r, count, ch, eb));
  });
  checkGenerator("tree broadcast", [](int n, int r, size_t count, int ch, size_t eb) {
    return treeBroadcast(sized<TreeParams>(n, r, count, ch, eb), 0);
  });
  checkGenerator("tree reduce", [](int n, int r, size_t count, int ch, size_t eb) {
    return treeReduce(sized<TreeParams>(n, r, count, ch, eb), n - 1);
  });
}

TEST(PackGrainSchedule, AGrainThatDoesNotDivideTheSlotIsRefused) {
  RingParams p = sized<RingParams>(2, 0, 1000, 1, 4);
  p.grainElems = 3;
  Result<Schedule> s = ringAllReduce(p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("grain of 3 elements must divide"), std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace braid::algo
