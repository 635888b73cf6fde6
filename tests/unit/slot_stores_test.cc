// SlotStores (tune/slot_stores.h): calls of a size class try both modes, then run the one that
// measured faster, try the other every kExploreEvery-th call, and follow the machine when it
// turns; smaller calls keep the starting choice.
#include "tune/slot_stores.h"

#include <gtest/gtest.h>

namespace braid::tune {
namespace {

constexpr size_t kMiB = 1 << 20;

// Runs `calls` calls of `bytes` that take `plainUs` or `streamedUs` as they are run; returns
// how many streamed.
int runCalls(SlotStores& s, size_t bytes, int calls, double plainUs, double streamedUs,
             bool startStreamed = false) {
  int streamed = 0;
  for (int i = 0; i < calls; ++i) {
    const bool stream = s.streamNext(bytes, startStreamed);
    streamed += stream ? 1 : 0;
    s.record(bytes, stream, (stream ? streamedUs : plainUs) * 1e-6);
  }
  return streamed;
}

TEST(SlotStores, TriesBothThenRunsTheFasterAndExploresTheOther) {
  SlotStores s;
  EXPECT_FALSE(s.streamNext(kMiB, false));  // the starting choice first
  s.record(kMiB, false, 200e-6);
  EXPECT_TRUE(s.streamNext(kMiB, false));  // then the other, once
  s.record(kMiB, true, 70e-6);
  // Streamed won: of the next 64 calls, all but one in kExploreEvery stream.
  const int streamed = runCalls(s, kMiB, 64, 200, 70);
  EXPECT_EQ(streamed, 64 - 64 / static_cast<int>(SlotStores::kExploreEvery));
  EXPECT_NEAR(s.nsPerByte(kMiB, true), 70e3 / kMiB, 1e-9);
}

TEST(SlotStores, FollowsTheMachineWhenItTurns) {
  SlotStores s;
  runCalls(s, kMiB, 40, 200, 70);  // far cores: streamed wins
  EXPECT_TRUE(s.streamNext(kMiB, false));
  // The cores come close: plain now takes 55 us and streamed 110. Within one exploration
  // period plain has been tried and wins; after that, plain but for the explorations.
  runCalls(s, kMiB, static_cast<int>(SlotStores::kExploreEvery) + 2, 55, 110);
  const int streamed = runCalls(s, kMiB, 64, 55, 110);
  EXPECT_EQ(streamed, 64 / static_cast<int>(SlotStores::kExploreEvery));
}

TEST(SlotStores, SizeClassesLearnApartAndSmallCallsKeepTheStart) {
  SlotStores s;
  runCalls(s, kMiB, 40, 200, 70);           // 1 MiB: streamed wins
  runCalls(s, 64 * kMiB, 40, 7000, 12000);  // 64 MiB: plain wins
  EXPECT_TRUE(s.streamNext(kMiB, false) || s.streamNext(kMiB, false));
  EXPECT_GT(s.nsPerByte(64 * kMiB, true), s.nsPerByte(64 * kMiB, false));
  EXPECT_LT(s.nsPerByte(kMiB, true), s.nsPerByte(kMiB, false));
  // Below kMinBytes nothing is measured and the starting choice holds.
  for (bool start : {false, true}) {
    for (int i = 0; i < 50; ++i) {
      EXPECT_EQ(s.streamNext(SlotStores::kMinBytes - 1, start), start);
      s.record(SlotStores::kMinBytes - 1, !start, 1e-9);
    }
  }
  EXPECT_EQ(s.nsPerByte(SlotStores::kMinBytes - 1, true), 0);
}

TEST(SlotStores, OneOutlierDoesNotHandOverTheCalls) {
  SlotStores s;
  runCalls(s, kMiB, 40, 200, 70);
  // One streamed call descheduled for 5 ms: counted as 4x the average (280 us), which leaves
  // the average at 175, still below plain's 200.
  s.record(kMiB, true, 5e-3);
  EXPECT_LT(s.nsPerByte(kMiB, true), s.nsPerByte(kMiB, false));
}

}  // namespace
}  // namespace braid::tune
