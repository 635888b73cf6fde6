// split_test.cc: ncclCommSplit. Ranks that pass one color form a communicator ranked by key (ties
// by their parent rank); NCCL_SPLIT_NOCOLOR gives NULL; a split of a split works; one thread
// splits several ranks inside a group; ranks as forked processes split too. Each new communicator
// proves its membership with an all_reduce of the parent ranks (a rank's bit in an int sum).
#include <gtest/gtest.h>

#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"
#include "support/multiprocess.h"

namespace {

using braid::testing::failsWith;

/// The sum over the members of (1 << parent rank), by an all_reduce on `comm`.
int memberBits(ncclComm_t comm, int parentRank) {
  int bits = 1 << parentRank;
  EXPECT_EQ(ncclAllReduce(&bits, &bits, 1, ncclInt32, ncclSum, comm, nullptr), ncclSuccess)
      << ncclGetLastError(comm);
  return bits;
}

class Split : public ::testing::Test {
 protected:
  static constexpr int kRanks = 4;
  void SetUp() override {
    parents_.assign(kRanks, nullptr);
    ASSERT_EQ(ncclCommInitAll(parents_.data(), kRanks, nullptr), ncclSuccess)
        << ncclGetLastError(nullptr);
  }
  void TearDown() override { destroy(parents_); }

  static void destroy(const std::vector<ncclComm_t>& comms) {
    for (ncclComm_t c : comms) {
      if (c != nullptr) {
        EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
      }
    }
  }

  /// One thread splits every parent in a group: rank r passes colors[r] and keys[r].
  std::vector<ncclComm_t> splitAll(const std::vector<ncclComm_t>& parents,
                                   const std::vector<int>& colors, const std::vector<int>& keys) {
    std::vector<ncclComm_t> out(parents.size(), nullptr);
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    for (size_t r = 0; r < parents.size(); ++r) {
      EXPECT_EQ(ncclCommSplit(parents[r], colors[r], keys[r], &out[r], nullptr), ncclSuccess);
    }
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
    return out;
  }

  /// Whether every member of `comms` (null ones skipped) has the given rank, size and members;
  /// the all_reduces of all members run in one group, which one thread needs.
  void expectMembers(const std::vector<ncclComm_t>& comms, const std::vector<int>& newRanks,
                     const std::vector<int>& sizes, const std::vector<int>& bits) {
    std::vector<int> got(comms.size(), 0);
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (size_t r = 0; r < comms.size(); ++r) {
      if (comms[r] == nullptr) continue;
      got[r] = 1 << r;
      ASSERT_EQ(ncclAllReduce(&got[r], &got[r], 1, ncclInt32, ncclSum, comms[r], nullptr),
                ncclSuccess);
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
    for (size_t r = 0; r < comms.size(); ++r) {
      SCOPED_TRACE("parent rank " + std::to_string(r));
      if (newRanks[r] < 0) {
        EXPECT_EQ(comms[r], nullptr);
        continue;
      }
      ASSERT_NE(comms[r], nullptr);
      int rank = -1, count = -1;
      EXPECT_EQ(ncclCommUserRank(comms[r], &rank), ncclSuccess);
      EXPECT_EQ(ncclCommCount(comms[r], &count), ncclSuccess);
      EXPECT_EQ(rank, newRanks[r]);
      EXPECT_EQ(count, sizes[r]);
      EXPECT_EQ(got[r], bits[r]);
    }
  }

  std::vector<ncclComm_t> parents_;
};

TEST_F(Split, ColorsMakeCommunicatorsRankedByKey) {
  // Evens and odds, each ranked backwards by key.
  auto halves = splitAll(parents_, {0, 1, 0, 1}, {0, -1, -2, -3});
  expectMembers(halves, {1, 1, 0, 0}, {2, 2, 2, 2}, {0b0101, 0b1010, 0b0101, 0b1010});
  destroy(halves);
}

TEST_F(Split, EqualKeysKeepTheParentsOrderAndNoColorGivesNull) {
  auto three = splitAll(parents_, {7, NCCL_SPLIT_NOCOLOR, 7, 7}, {5, 5, 5, 5});
  expectMembers(three, {0, -1, 1, 2}, {3, 0, 3, 3}, {0b1101, 0, 0b1101, 0b1101});
  destroy(three);
}

TEST_F(Split, ASplitOfASplit) {
  auto all = splitAll(parents_, {0, 0, 0, 0}, {3, 2, 1, 0});  // reversed: parent r is 3 - r
  expectMembers(all, {3, 2, 1, 0}, {4, 4, 4, 4}, {0b1111, 0b1111, 0b1111, 0b1111});
  // Parents 0 and 1 (ranks 3 and 2 of the reversed communicator) pair up, as do 2 and 3; with
  // equal keys each pair keeps the reversed communicator's order.
  auto pairs = splitAll(all, {1, 1, 0, 0}, {0, 0, 0, 0});
  expectMembers(pairs, {1, 0, 1, 0}, {2, 2, 2, 2}, {0b0011, 0b0011, 0b1100, 0b1100});
  destroy(pairs);
  destroy(all);
}

TEST_F(Split, BadArgumentsAreRefusedByName) {
  ncclComm_t out = nullptr;
  EXPECT_TRUE(failsWith([&] { return ncclCommSplit(parents_[0], 0, 0, nullptr, nullptr); },
                        ncclInvalidArgument, {"newcomm"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommSplit(nullptr, 0, 0, &out, nullptr); }, std::nullopt,
                        {"comm"}));
  ncclComm_t alone = nullptr;
  ASSERT_EQ(ncclCommInitAll(&alone, 1, nullptr), ncclSuccess);
  EXPECT_TRUE(failsWith([&] { return ncclCommSplit(alone, -5, 0, &out, nullptr); },
                        ncclInvalidArgument, {"color -5"}));
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(ncclCommDestroy(alone), ncclSuccess);
}

TEST(SplitProcesses, FourProcessesSplitIntoPairs) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runProcesses(4, [&](int rank) {
    ncclComm_t parent = nullptr;
    ASSERT_EQ(ncclCommInitRank(&parent, 4, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    ncclComm_t pair = nullptr;
    ASSERT_EQ(ncclCommSplit(parent, rank / 2, rank, &pair, nullptr), ncclSuccess)
        << ncclGetLastError(parent);
    ASSERT_NE(pair, nullptr);
    int newRank = -1;
    EXPECT_EQ(ncclCommUserRank(pair, &newRank), ncclSuccess);
    EXPECT_EQ(newRank, rank % 2);
    EXPECT_EQ(memberBits(pair, rank), rank < 2 ? 0b0011 : 0b1100);
    EXPECT_EQ(memberBits(parent, rank), 0b1111);  // the parent still works
    EXPECT_EQ(ncclCommDestroy(pair), ncclSuccess);
    EXPECT_EQ(ncclCommDestroy(parent), ncclSuccess);
  });
}

}  // namespace
