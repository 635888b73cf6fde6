// ncclSend / ncclRecv: fused in groups so any order works, across real
// processes and threads; messages between two ranks keep their order;
// mismatched sizes and unmatched self-sends fail with a message.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nccl.h"
#include "support/multiprocess.h"

namespace {

std::vector<int32_t> pattern(int from, int to, size_t count, int salt = 0) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i) {
    v[i] = static_cast<int32_t>(from * 1000003 + to * 7919 + salt * 31 + i);
  }
  return v;
}

// Every rank sends to its successor and receives from its predecessor,
// issuing the send first: without fusion this deadlocks once the message
// outgrows the FIFO.
void ringExchange(ncclComm_t comm, int rank, int nranks, size_t count) {
  int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  auto out = pattern(rank, next, count);
  std::vector<int32_t> in(count, -1);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclSend(out.data(), count, ncclInt32, next, comm, nullptr), ncclSuccess);
  ASSERT_EQ(ncclRecv(in.data(), count, ncclInt32, prev, comm, nullptr), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comm);
  EXPECT_EQ(in, pattern(prev, rank, count)) << "rank " << rank;
}

// Each rank sends a distinct block to every rank (itself included).
void allToAllByHand(ncclComm_t comm, int rank, int nranks, size_t count) {
  std::vector<std::vector<int32_t>> out(nranks), in(nranks);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int p = 0; p < nranks; ++p) {
    out[p] = pattern(rank, p, count, 1);
    in[p].assign(count, -1);
    ASSERT_EQ(ncclSend(out[p].data(), count, ncclInt32, p, comm, nullptr), ncclSuccess);
  }
  for (int p = nranks - 1; p >= 0; --p) {  // receives in the opposite order
    ASSERT_EQ(ncclRecv(in[p].data(), count, ncclInt32, p, comm, nullptr), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comm);
  for (int p = 0; p < nranks; ++p) EXPECT_EQ(in[p], pattern(p, rank, count, 1));
}

class P2pProcesses : public ::testing::TestWithParam<int> {};

TEST_P(P2pProcesses, RingExchangeAndAllToAll) {
  const int nranks = GetParam();
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runProcesses(nranks, [&](int rank) {
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, nranks, id, rank), ncclSuccess);
    for (size_t count : {size_t(1), size_t(1000), size_t(1) << 20}) {
      ringExchange(comm, rank, nranks, count);
      allToAllByHand(comm, rank, nranks, count / 4 + 1);
    }
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

INSTANTIATE_TEST_SUITE_P(P2p, P2pProcesses, ::testing::Values(2, 3, 5),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

class P2pThreads : public ::testing::Test {
 protected:
  void SetUp() override {
    comms_.resize(kRanks);
    ASSERT_EQ(ncclCommInitAll(comms_.data(), kRanks, nullptr), ncclSuccess);
  }
  void TearDown() override {
    for (auto c : comms_) ncclCommDestroy(c);
  }
  static constexpr int kRanks = 3;
  std::vector<ncclComm_t> comms_;
};

TEST_F(P2pThreads, MessagesBetweenTwoRanksKeepTheirOrder) {
  braid::testing::runThreads(kRanks, [&](int rank) {
    if (rank == 2) return;
    int peer = 1 - rank;
    std::vector<std::vector<int32_t>> out, in;
    for (int m = 0; m < 5; ++m) {
      out.push_back(pattern(rank, peer, 100 + 50000 * m, m));
      in.emplace_back(100 + 50000 * m, -1);
    }
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int m = 0; m < 5; ++m) {
      ASSERT_EQ(ncclRecv(in[m].data(), in[m].size(), ncclInt32, peer, comms_[rank], nullptr),
                ncclSuccess);
      ASSERT_EQ(ncclSend(out[m].data(), out[m].size(), ncclInt32, peer, comms_[rank], nullptr),
                ncclSuccess);
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
    for (int m = 0; m < 5; ++m) EXPECT_EQ(in[m], pattern(peer, rank, in[m].size(), m));
  });
}

TEST_F(P2pThreads, SendToSelfInAGroup) {
  auto out = pattern(0, 0, 777);
  std::vector<int32_t> in(777, -1);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclSend(out.data(), 777, ncclInt32, 0, comms_[0], nullptr), ncclSuccess);
  ASSERT_EQ(ncclRecv(in.data(), 777, ncclInt32, 0, comms_[0], nullptr), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(in, out);
}

TEST_F(P2pThreads, UnmatchedSendToSelfIsAnError) {
  std::vector<int32_t> buf(4);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclSend(buf.data(), 4, ncclInt32, 1, comms_[1], nullptr), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);
  EXPECT_NE(std::string(ncclGetLastError(nullptr)).find("self"), std::string::npos)
      << ncclGetLastError(nullptr);
}

TEST_F(P2pThreads, MismatchedSizesAreReportedNotHung) {
  setenv("BRAID_TIMEOUT_MS", "2000", 1);
  std::vector<ncclComm_t> comms(2);
  ncclResult_t init = ncclCommInitAll(comms.data(), 2, nullptr);
  unsetenv("BRAID_TIMEOUT_MS");
  ASSERT_EQ(init, ncclSuccess);
  std::vector<ncclResult_t> results(2);
  std::vector<std::string> texts(2);
  braid::testing::runThreads(2, [&](int rank) {
    std::vector<int32_t> buf(1000);
    results[rank] = rank == 0 ? ncclSend(buf.data(), 1000, ncclInt32, 1, comms[rank], nullptr)
                              : ncclRecv(buf.data(), 500, ncclInt32, 0, comms[rank], nullptr);
    texts[rank] = ncclGetLastError(nullptr);
  });
  // The sender's 4000 bytes fit the FIFO, so its send completes; the receiver sees the sizes.
  EXPECT_EQ(results[0], ncclSuccess) << texts[0];
  EXPECT_EQ(results[1], ncclInvalidUsage);
  EXPECT_NE(texts[1].find("sent 4000 bytes"), std::string::npos) << texts[1];
  for (auto c : comms) ncclCommDestroy(c);
}

TEST_F(P2pThreads, BadArguments) {
  std::vector<int32_t> buf(4);
  EXPECT_EQ(ncclSend(buf.data(), 4, ncclInt32, 3, comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_NE(std::string(ncclGetLastError(nullptr)).find("peer 3"), std::string::npos);
  EXPECT_EQ(ncclRecv(buf.data(), 4, ncclInt32, -1, comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclSend(nullptr, 4, ncclInt32, 1, comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_NE(std::string(ncclGetLastError(nullptr)).find("sendbuff"), std::string::npos);
  EXPECT_EQ(ncclRecv(nullptr, 4, ncclInt32, 1, comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclSend(buf.data(), 4, static_cast<ncclDataType_t>(42), 1, comms_[0], nullptr),
            ncclInvalidArgument);
  EXPECT_EQ(ncclSend(buf.data(), 4, ncclInt32, 1, nullptr, nullptr), ncclInvalidArgument);
  // Zero elements: nothing to match, nothing to wait for.
  EXPECT_EQ(ncclSend(nullptr, 0, ncclInt32, 1, comms_[0], nullptr), ncclSuccess);
}

}  // namespace
