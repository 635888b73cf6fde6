// LentSlices (src/exec/lent_slices.h) over send ends that record what they are asked: a write
// over a slice still lent waits for that lend and no other, a channel's end waits for the last
// lend of each port that lent, a failure cuts off only the ends that lent, and a wait that fails
// is the caller's error.
#include <gtest/gtest.h>

#include <vector>

#include "exec/lent_slices.h"

namespace braid::exec {
namespace {

/// A send end that lends: numbers its lends, and records every wait and cut-off.
class RecordingEnd final : public transport::SendEnd {
 public:
  explicit RecordingEnd(bool lends = true) : lends_(lends) {}
  size_t slotBytes() const override { return 1 << 20; }
  Result<void*> waitSlot(const transport::WaitContext&) override { return slot_.data(); }
  void* trySlot() override { return slot_.data(); }
  void post(size_t) override {}
  bool lends() const override { return lends_; }
  uint32_t postLent(const void*, size_t) override { return next_++; }
  Status waitReturned(uint32_t upTo, const transport::WaitContext& ctx) override {
    waits.push_back(upTo);
    peers.push_back(ctx.peer);
    return fail ? internalError("gone") : Status();
  }
  void abandonLent() override { ++abandoned; }

  std::vector<uint32_t> waits;
  std::vector<int> peers;
  int abandoned = 0;
  bool fail = false;

 private:
  bool lends_;
  uint32_t next_ = 0;
  std::vector<char> slot_ = std::vector<char>(1 << 20);
};

struct Channel {
  RecordingEnd a, b;
  RecordingEnd copies{false};
  std::vector<transport::SendEnd*> ends{&a, &b, &copies, nullptr};
  std::vector<int> peers{5, 6, 7, 8};
  LentSlices lent{ends, peers};
  std::vector<char> memory = std::vector<char>(1 << 20);
  const char* at(size_t offset) const { return memory.data() + offset; }
  /// Lends `bytes` at `offset` on `port`, as the executor does.
  void lend(size_t port, size_t offset, size_t bytes) {
    lent.add(port, ends[port]->postLent(at(offset), bytes), at(offset), bytes);
  }
};

TEST(LentSlicesTest, OnlyWhatLendsAndIsLargeEnoughIsLent) {
  Channel ch;
  EXPECT_TRUE(ch.lent.mayLend(0, LentSlices::kMinBytes));
  EXPECT_FALSE(ch.lent.mayLend(0, LentSlices::kMinBytes - 1));
  EXPECT_FALSE(ch.lent.mayLend(2, LentSlices::kMinBytes));  // its end copies
  EXPECT_FALSE(ch.lent.mayLend(3, LentSlices::kMinBytes));  // no end
  EXPECT_FALSE(ch.lent.mayLend(9, LentSlices::kMinBytes));  // no such port
}

TEST(LentSlicesTest, AWriteOverALentSliceWaitsForThatLendOnly) {
  Channel ch;
  ch.lend(0, 0, 100);    // lend 0 of port 0
  ch.lend(0, 100, 100);  // lend 1
  ch.lend(1, 300, 100);  // lend 0 of port 1
  const transport::WaitContext wait;
  ASSERT_TRUE(ch.lent.clear(ch.at(200), 100, wait).ok());  // between them: no wait
  EXPECT_TRUE(ch.a.waits.empty());
  EXPECT_TRUE(ch.b.waits.empty());
  ASSERT_TRUE(ch.lent.clear(ch.at(150), 10, wait).ok());
  EXPECT_EQ(ch.a.waits, std::vector<uint32_t>{1});
  EXPECT_EQ(ch.a.peers, std::vector<int>{5});
  // Lends come back in order: lend 0 is back too, so neither is waited for again.
  ASSERT_TRUE(ch.lent.clear(ch.at(0), 200, wait).ok());
  EXPECT_EQ(ch.a.waits.size(), 1u);
  ASSERT_TRUE(ch.lent.clear(ch.at(399), 1, wait).ok());
  EXPECT_EQ(ch.b.waits, std::vector<uint32_t>{0});
  EXPECT_EQ(ch.b.peers, std::vector<int>{6});
}

TEST(LentSlicesTest, AChannelsEndWaitsForEachPortsLastLend) {
  Channel ch;
  for (int i = 0; i < 20; ++i) ch.lend(0, i * 1000, 1000);  // more than a FIFO's slots
  ch.lend(1, 50000, 10);
  ASSERT_TRUE(ch.lent.returnAll(transport::WaitContext()).ok());
  EXPECT_EQ(ch.a.waits, std::vector<uint32_t>{19});
  EXPECT_EQ(ch.b.waits, std::vector<uint32_t>{0});
  // All back: nothing more to wait for, and no write waits.
  ASSERT_TRUE(ch.lent.returnAll(transport::WaitContext()).ok());
  ASSERT_TRUE(ch.lent.clear(ch.at(0), 1 << 20, transport::WaitContext()).ok());
  EXPECT_EQ(ch.a.waits.size(), 1u);
  EXPECT_EQ(ch.b.waits.size(), 1u);
}

TEST(LentSlicesTest, AFailedWaitIsTheCallersAndAFailureCutsOffOnlyTheEndsThatLent) {
  Channel ch;
  ch.lend(1, 0, 100);
  ch.b.fail = true;
  EXPECT_FALSE(ch.lent.clear(ch.at(50), 1, transport::WaitContext()).ok());
  EXPECT_FALSE(ch.lent.returnAll(transport::WaitContext()).ok());
  ch.lent.abandon();
  EXPECT_EQ(ch.a.abandoned, 0);
  EXPECT_EQ(ch.b.abandoned, 1);
  EXPECT_EQ(ch.copies.abandoned, 0);
}

TEST(LentSlicesTest, NothingLentIsNothingToWaitFor) {
  Channel ch;
  ASSERT_TRUE(ch.lent.clear(ch.at(0), 1 << 20, transport::WaitContext()).ok());
  ASSERT_TRUE(ch.lent.returnAll(transport::WaitContext()).ok());
  ch.lent.abandon();
  EXPECT_TRUE(ch.a.waits.empty());
  EXPECT_EQ(ch.a.abandoned + ch.b.abandoned, 0);
}

}  // namespace
}  // namespace braid::exec
