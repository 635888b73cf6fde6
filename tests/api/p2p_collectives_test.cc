// ncclGather, ncclScatter and ncclAlltoAll (batches of sends and receives)
// across processes and threads, every root, checked element by element.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nccl.h"
#include "support/multiprocess.h"

namespace {

int64_t value(int from, int to, size_t i) { return from * 1000003LL + to * 7919LL + i; }

void gatherAllRoots(ncclComm_t comm, int rank, int nranks, size_t count) {
  for (int root = 0; root < nranks; ++root) {
    std::vector<int64_t> in(count), out(rank == root ? count * nranks : 0, -1);
    for (size_t i = 0; i < count; ++i) in[i] = value(rank, root, i);
    ASSERT_EQ(ncclGather(in.data(), rank == root ? out.data() : nullptr, count, ncclInt64, root,
                         comm, nullptr),
              ncclSuccess)
        << ncclGetLastError(comm);
    if (rank != root) continue;
    for (int r = 0; r < nranks; ++r) {
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(out[r * count + i], value(r, root, i)) << "root " << root << " from " << r;
      }
    }
  }
}

void scatterAllRoots(ncclComm_t comm, int rank, int nranks, size_t count) {
  for (int root = 0; root < nranks; ++root) {
    std::vector<int64_t> in(rank == root ? count * nranks : 0), out(count, -1);
    for (int r = 0; rank == root && r < nranks; ++r) {
      for (size_t i = 0; i < count; ++i) in[r * count + i] = value(root, r, i);
    }
    ASSERT_EQ(ncclScatter(rank == root ? in.data() : nullptr, out.data(), count, ncclInt64, root,
                          comm, nullptr),
              ncclSuccess)
        << ncclGetLastError(comm);
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[i], value(root, rank, i));
  }
}

void allToAll(ncclComm_t comm, int rank, int nranks, size_t count) {
  std::vector<int64_t> in(count * nranks), out(count * nranks, -1);
  for (int r = 0; r < nranks; ++r) {
    for (size_t i = 0; i < count; ++i) in[r * count + i] = value(rank, r, i);
  }
  ASSERT_EQ(ncclAlltoAll(in.data(), out.data(), count, ncclInt64, comm, nullptr), ncclSuccess)
      << ncclGetLastError(comm);
  for (int r = 0; r < nranks; ++r) {
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[r * count + i], value(r, rank, i));
  }
}

class P2pCollectives : public ::testing::TestWithParam<int> {};

TEST_P(P2pCollectives, GatherScatterAllToAllAcrossProcesses) {
  const int nranks = GetParam();
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runProcesses(nranks, [&](int rank) {
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, nranks, id, rank), ncclSuccess);
    for (size_t count : {size_t(0), size_t(1), size_t(7), size_t(100003)}) {
      SCOPED_TRACE("count " + std::to_string(count));
      gatherAllRoots(comm, rank, nranks, count);
      scatterAllRoots(comm, rank, nranks, count);
      allToAll(comm, rank, nranks, count);
    }
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, P2pCollectives, ::testing::Values(1, 2, 3, 5),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

TEST(P2pCollectivesArgs, BadRootAndBuffersAreRejected) {
  ncclComm_t comm = nullptr;
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ASSERT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess);
  std::vector<int32_t> buf(4);
  EXPECT_EQ(ncclGather(buf.data(), buf.data(), 4, ncclInt32, 1, comm, nullptr),
            ncclInvalidArgument);
  EXPECT_NE(std::string(ncclGetLastError(comm)).find("root 1"), std::string::npos);
  EXPECT_EQ(ncclScatter(nullptr, buf.data(), 4, ncclInt32, 0, comm, nullptr), ncclInvalidArgument);
  EXPECT_NE(std::string(ncclGetLastError(comm)).find("sendbuff"), std::string::npos);
  EXPECT_EQ(ncclGather(buf.data(), nullptr, 4, ncclInt32, 0, comm, nullptr), ncclInvalidArgument);
  EXPECT_NE(std::string(ncclGetLastError(comm)).find("recvbuff"), std::string::npos);
  EXPECT_EQ(ncclAlltoAll(nullptr, buf.data(), 4, ncclInt32, comm, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclAlltoAll(buf.data(), buf.data(), 4, static_cast<ncclDataType_t>(-3), comm, nullptr),
            ncclInvalidArgument);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

}  // namespace
