// Groups with NCCL's semantics: one thread creating several ranks inside a
// group, running a collective on each of several communicators inside a
// group, and finalizing them inside a group; each deadlocks unless the group
// runs the communicators concurrently at ncclGroupEnd. Destroys inside a
// group wait for what the group queued for their communicators.
#include <gtest/gtest.h>

#include <vector>

#include "nccl.h"

namespace {

TEST(Group, OneThreadCreatesAndDrivesSeveralRanks) {
  const int nranks = 3;
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(nranks, nullptr);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < nranks; ++r) {
    ASSERT_EQ(ncclCommInitRank(&comms[r], nranks, id, r), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (int r = 0; r < nranks; ++r) {
    ASSERT_NE(comms[r], nullptr);
    int rank = -1;
    EXPECT_EQ(ncclCommUserRank(comms[r], &rank), ncclSuccess);
    EXPECT_EQ(rank, r);
  }

  // Two all-reduces per communicator in one group: order within a
  // communicator is kept, communicators run concurrently.
  const size_t count = 100003;
  std::vector<std::vector<float>> a(nranks), b(nranks);
  for (int r = 0; r < nranks; ++r) {
    a[r].assign(count, static_cast<float>(r + 1));
    b[r].assign(count, static_cast<float>(10 * (r + 1)));
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < nranks; ++r) {
    ASSERT_EQ(
        ncclAllReduce(a[r].data(), a[r].data(), count, ncclFloat32, ncclSum, comms[r], nullptr),
        ncclSuccess);
    ASSERT_EQ(
        ncclAllReduce(b[r].data(), b[r].data(), count, ncclFloat32, ncclMax, comms[r], nullptr),
        ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (int r = 0; r < nranks; ++r) {
    EXPECT_EQ(a[r][0], 6.0f);
    EXPECT_EQ(a[r][count - 1], 6.0f);
    EXPECT_EQ(b[r][count / 2], 30.0f);
  }
  for (auto c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
}

// ncclCommInitAll of 4 ranks, then the finalize of the four in one group (each
// finalize waits for every rank), then their destroys in another; then the same
// with finalize, a last all-reduce before it, and the destroys all in one group.
TEST(Group, OneThreadFinalizesAndDestroysSeveralRanks) {
  const int nranks = 4;
  std::vector<ncclComm_t> comms(nranks, nullptr);
  ASSERT_EQ(ncclCommInitAll(comms.data(), nranks, nullptr), ncclSuccess)
      << ncclGetLastError(nullptr);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (auto c : comms) ASSERT_EQ(ncclCommFinalize(c), ncclSuccess) << ncclGetLastError(c);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (auto c : comms) ASSERT_EQ(ncclCommDestroy(c), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);

  ASSERT_EQ(ncclCommInitAll(comms.data(), nranks, nullptr), ncclSuccess)
      << ncclGetLastError(nullptr);
  std::vector<std::vector<int>> data(nranks, std::vector<int>(1000, 1));
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < nranks; ++r) {
    ASSERT_EQ(
        ncclAllReduce(data[r].data(), data[r].data(), 1000, ncclInt32, ncclSum, comms[r], nullptr),
        ncclSuccess);
    ASSERT_EQ(ncclCommFinalize(comms[r]), ncclSuccess);
    ASSERT_EQ(ncclCommDestroy(comms[r]), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (const auto& d : data) EXPECT_EQ(d[999], nranks);
}

// ncclCommInitRankScalable with three ids, made by different calls, on every rank.
TEST(Group, ScalableInitWithSeveralIdsMakesOneCommunicator) {
  const int nranks = 3;
  std::vector<ncclUniqueId> ids(3);
  for (auto& id : ids) ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(nranks, nullptr);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < nranks; ++r) {
    ASSERT_EQ(ncclCommInitRankScalable(&comms[r], nranks, r, 3, ids.data(), nullptr), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  std::vector<int> values = {1, 2, 4};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < nranks; ++r) {
    ASSERT_EQ(ncclAllReduce(&values[r], &values[r], 1, ncclInt32, ncclSum, comms[r], nullptr),
              ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (int r = 0; r < nranks; ++r) EXPECT_EQ(values[r], 7);
  for (auto c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  ncclComm_t none = nullptr;
  EXPECT_EQ(ncclCommInitRankScalable(&none, 1, 0, 0, ids.data(), nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitRankScalable(&none, 1, 0, 1, nullptr, nullptr), ncclInvalidArgument);
}

TEST(Group, FailureInsideAGroupIsReportedAtGroupEnd) {
  // A rank whose peers never come: with a short deadline, the group ends
  // with the bootstrap's error instead of hanging.
  setenv("BRAID_TIMEOUT_MS", "1000", 1);
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclCommInitRank(&comm, 2, id, 0), ncclSuccess);
  ncclResult_t r = ncclGroupEnd();
  unsetenv("BRAID_TIMEOUT_MS");
  EXPECT_NE(r, ncclSuccess);
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(std::string(ncclGetLastError(nullptr)).find("rank 1"), std::string::npos)
      << ncclGetLastError(nullptr);
}

}  // namespace
