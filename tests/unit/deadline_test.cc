// Deadline::afterMsCoarse (base/deadline.h): read from the tick clock, it is never more than a
// tick later than afterMs's, it still ends, and its cancel flag still ends it. pollMs rounds up.
#include "base/deadline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace braid {
namespace {

TEST(Deadline, CoarseWithoutATimeIsNever) {
  EXPECT_TRUE(Deadline::afterMsCoarse(0).isNever());
  EXPECT_TRUE(Deadline::afterMsCoarse(-5).isNever());
  EXPECT_FALSE(Deadline::afterMsCoarse(0).expired());
}

TEST(Deadline, CoarseIsNeverMoreThanATickLate) {
  // The tick clock never runs ahead of the precise one, so a coarse deadline ends at most a
  // tick (10 ms at the coarsest kernel setting) after a precise one made at the same moment.
  for (int i = 0; i < 1000; ++i) {
    const Deadline coarse = Deadline::afterMsCoarse(60000);
    ASSERT_FALSE(coarse.isNever());
    ASSERT_LE(coarse.remainingMs(), 60000 + 10) << "round " << i;
  }
}

TEST(Deadline, CoarseEnds) {
  const Deadline d = Deadline::afterMsCoarse(1);
  while (!d.expired()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(d.remainingMs(), 0);
}

TEST(Deadline, CoarseHonoursItsCancelFlag) {
  std::atomic<bool> flag{false};
  const Deadline d = Deadline::afterMsCoarse(60000).cancelledBy(&flag);
  EXPECT_FALSE(d.expired());
  flag = true;
  EXPECT_TRUE(d.expired());
}

TEST(Deadline, PollTimeoutsRoundUpSoThatPollNeverSpins) {
  // A poll() that waits until a deadline must not be told 0 while time is left: a loop that
  // polls until the deadline passes would spin through it for the last millisecond.
  const Deadline d = Deadline::afterMs(50);
  while (!d.expired()) {
    ASSERT_GE(d.pollMs(), 1);
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  EXPECT_EQ(d.pollMs(), 0);
  EXPECT_EQ(Deadline::never().pollMs(), -1);
  std::atomic<bool> flag{false};
  EXPECT_EQ(Deadline::never().cancelledBy(&flag).pollMs(), Deadline::kCancelSliceMs);
  flag = true;
  EXPECT_EQ(Deadline::never().cancelledBy(&flag).pollMs(), 0);
}

}  // namespace
}  // namespace braid
