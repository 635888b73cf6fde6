// ncclCommInitRankScalable with several unique ids: each id's root meets one block of the ranks
// and the blocks' roots hand each other the ring between them (bootstrap/root.h), so a large job
// spreads its rendezvous as NCCL's does. The ranks here are threads of this process, or
// processes, on host communicators.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"
#include "support/multiprocess.h"

namespace scalable_init_test {

using braid::testing::failsWith;
using braid::testing::newId;
using braid::testing::ScopedEnv;

// Makes a communicator of `nranks` threads from `nIds` fresh ids; each rank checks its rank and
// size and an all-reduce of the ranks' numbers. Returns how many ranks saw everything right.
int makeAndCheck(int nranks, int nIds) {
  ScopedEnv host("BRAID_HOST_COMM", "1");
  std::vector<ncclUniqueId> ids(nIds);
  for (auto& id : ids) id = newId();
  std::atomic<int> good{0};
  braid::testing::runThreads(nranks, [&](int rank) {
    ncclComm_t comm = nullptr;
    const ncclResult_t made =
        ncclCommInitRankScalable(&comm, nranks, rank, nIds, ids.data(), nullptr);
    EXPECT_EQ(made, ncclSuccess) << "rank " << rank << ": " << ncclGetLastError(nullptr);
    if (made != ncclSuccess) return;
    int count = 0, me = -1;
    EXPECT_EQ(ncclCommCount(comm, &count), ncclSuccess);
    EXPECT_EQ(ncclCommUserRank(comm, &me), ncclSuccess);
    int64_t value = rank;
    EXPECT_EQ(ncclAllReduce(&value, &value, 1, ncclInt64, ncclSum, comm, nullptr), ncclSuccess);
    const int64_t expected = static_cast<int64_t>(nranks) * (nranks - 1) / 2;
    if (count == nranks && me == rank && value == expected) ++good;
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
  return good.load();
}

TEST(ScalableInit, OneHundredSixtyRanksFromTwoIds) { EXPECT_EQ(makeAndCheck(160, 2), 160); }

// Blocks of unequal size (3, 2, 2), and every rank its own root.
TEST(ScalableInit, UnevenBlocksAndARootPerRank) {
  EXPECT_EQ(makeAndCheck(7, 3), 7);
  EXPECT_EQ(makeAndCheck(4, 4), 4);
}

// The same with the ranks as processes (the roots listen in this one).
TEST(ScalableInit, SixProcessesFromThreeIds) {
  constexpr int kRanks = 6;
  ScopedEnv host("BRAID_HOST_COMM", "1");
  std::vector<ncclUniqueId> ids = {newId(), newId(), newId()};
  braid::testing::runProcesses(kRanks, [&](int rank) {
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRankScalable(&comm, kRanks, rank, 3, ids.data(), nullptr), ncclSuccess)
        << ncclGetLastError(nullptr);
    std::vector<float> values(1000, static_cast<float>(rank));
    EXPECT_EQ(ncclAllReduce(values.data(), values.data(), values.size(), ncclFloat32, ncclSum, comm,
                            nullptr),
              ncclSuccess);
    EXPECT_EQ(values[999], 15.0f);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

TEST(ScalableInitBadInput, IdsThatCannotServeAreRefused) {
  ncclUniqueId ids[2] = {newId(), newId()};
  ncclComm_t comm = nullptr;
  EXPECT_TRUE(failsWith([&] { return ncclCommInitRankScalable(&comm, 1, 0, 2, ids, nullptr); },
                        ncclInvalidArgument, {"nId 2", "1 ranks"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommInitRankScalable(&comm, 2, 0, 0, ids, nullptr); },
                        ncclInvalidArgument, {"nId"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommInitRankScalable(&comm, 2, 0, 2, nullptr, nullptr); },
                        ncclInvalidArgument, {"commIds"}));
  ncclUniqueId same[2] = {ids[0], ids[0]};
  EXPECT_TRUE(failsWith([&] { return ncclCommInitRankScalable(&comm, 2, 1, 2, same, nullptr); },
                        std::nullopt, {"same id"}));
  ncclUniqueId garbage[2] = {ids[0], {}};
  memset(garbage[1].internal, 0x5a, sizeof(garbage[1].internal));
  EXPECT_TRUE(failsWith([&] { return ncclCommInitRankScalable(&comm, 2, 1, 2, garbage, nullptr); },
                        std::nullopt, {"unique id 1"}));
}

}  // namespace scalable_init_test
