// Bad input to every collective and to the premulsum calls: each is refused with
// ncclInvalidArgument and a ncclGetLastError text that names the call and the problem (the NULL
// buffer, the root or peer out of range, the unknown datatype or op, the dead or mismatched
// premulsum op), and changes nothing. A NULL buffer that the rank does not use (a non-root's
// sendbuff of broadcast and scatter, recvbuff of reduce and gather) is accepted, and so is any
// NULL buffer with count 0.
//
// Most checks run on a one-rank communicator, which has no peer to wait for; the unused-buffer
// checks need peers and run four ranks as threads.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"
#include "support/multiprocess.h"

namespace {

using braid::testing::failsWith;
using braid::testing::newId;
using braid::testing::OneRankTest;
using braid::testing::runThreads;

/// One bad call: what it is, the call, and what its error text must mention.
struct BadCall {
  std::string what;
  std::function<ncclResult_t()> call;
  std::vector<std::string> needles;
};

class CollectiveBadInput : public OneRankTest {
 protected:
  void expectAllRefused(const std::vector<BadCall>& calls) {
    for (const BadCall& bad : calls) {
      SCOPED_TRACE(bad.what);
      EXPECT_TRUE(failsWith(bad.call, ncclInvalidArgument, bad.needles, comm_));
    }
    // Nothing was written, and the communicator still works.
    EXPECT_EQ(buf_, std::vector<float>(buf_.size(), 1.0f));
    std::vector<float> out(4, 0.0f);
    EXPECT_EQ(ncclAllReduce(buf_.data(), out.data(), 4, ncclFloat32, ncclSum, comm_, nullptr),
              ncclSuccess)
        << ncclGetLastError(comm_);
    EXPECT_EQ(out, std::vector<float>(4, 1.0f));
  }

  std::vector<float> buf_ = std::vector<float>(8, 1.0f);
};

TEST_F(CollectiveBadInput, NullBuffersThatTheRankUsesAreRefused) {
  float* b = buf_.data();
  const ncclComm_t c = comm_;
  const std::vector<std::string> send = {"sendbuff", "NULL"}, recv = {"recvbuff", "NULL"};
  auto with = [](std::string name, std::vector<std::string> needles) {
    needles.push_back(std::move(name));
    return needles;
  };
  expectAllRefused({
      {"AllReduce send",
       [=] { return ncclAllReduce(nullptr, b, 4, ncclFloat32, ncclSum, c, nullptr); },
       with("ncclAllReduce", send)},
      {"AllReduce recv",
       [=] { return ncclAllReduce(b, nullptr, 4, ncclFloat32, ncclSum, c, nullptr); },
       with("ncclAllReduce", recv)},
      {"ReduceScatter send",
       [=] { return ncclReduceScatter(nullptr, b, 4, ncclFloat32, ncclSum, c, nullptr); },
       with("ncclReduceScatter", send)},
      {"ReduceScatter recv",
       [=] { return ncclReduceScatter(b, nullptr, 4, ncclFloat32, ncclSum, c, nullptr); },
       with("ncclReduceScatter", recv)},
      {"AllGather send", [=] { return ncclAllGather(nullptr, b, 4, ncclFloat32, c, nullptr); },
       with("ncclAllGather", send)},
      {"AllGather recv", [=] { return ncclAllGather(b, nullptr, 4, ncclFloat32, c, nullptr); },
       with("ncclAllGather", recv)},
      // Rank 0 is the root of everything on a one-rank communicator: it uses both buffers.
      {"Broadcast send", [=] { return ncclBroadcast(nullptr, b, 4, ncclFloat32, 0, c, nullptr); },
       with("ncclBroadcast", send)},
      {"Broadcast recv", [=] { return ncclBroadcast(b, nullptr, 4, ncclFloat32, 0, c, nullptr); },
       with("ncclBroadcast", recv)},
      {"Bcast",
       [=] { return ncclBcast(nullptr, 4, ncclFloat32, 0, c, nullptr); },
       {"ncclBroadcast", "NULL"}},
      {"Reduce send",
       [=] { return ncclReduce(nullptr, b, 4, ncclFloat32, ncclSum, 0, c, nullptr); },
       with("ncclReduce", send)},
      {"Reduce recv",
       [=] { return ncclReduce(b, nullptr, 4, ncclFloat32, ncclSum, 0, c, nullptr); },
       with("ncclReduce", recv)},
      {"Gather send", [=] { return ncclGather(nullptr, b, 4, ncclFloat32, 0, c, nullptr); },
       with("ncclGather", send)},
      {"Gather recv", [=] { return ncclGather(b, nullptr, 4, ncclFloat32, 0, c, nullptr); },
       with("ncclGather", recv)},
      {"Scatter send", [=] { return ncclScatter(nullptr, b, 4, ncclFloat32, 0, c, nullptr); },
       with("ncclScatter", send)},
      {"Scatter recv", [=] { return ncclScatter(b, nullptr, 4, ncclFloat32, 0, c, nullptr); },
       with("ncclScatter", recv)},
      {"AlltoAll send", [=] { return ncclAlltoAll(nullptr, b, 4, ncclFloat32, c, nullptr); },
       with("ncclAlltoAll", send)},
      {"AlltoAll recv", [=] { return ncclAlltoAll(b, nullptr, 4, ncclFloat32, c, nullptr); },
       with("ncclAlltoAll", recv)},
      {"Send", [=] { return ncclSend(nullptr, 4, ncclFloat32, 0, c, nullptr); },
       with("ncclSend", send)},
      {"Recv", [=] { return ncclRecv(nullptr, 4, ncclFloat32, 0, c, nullptr); },
       with("ncclRecv", recv)},
  });
}

TEST_F(CollectiveBadInput, RootsAndPeersOutOfRangeAreRefused) {
  float* b = buf_.data();
  const ncclComm_t c = comm_;
  std::vector<BadCall> calls;
  for (int root : {-1, 1, 1 << 30}) {
    const std::string r = std::to_string(root);
    const std::vector<std::string> needles = {"root " + r, "outside"};
    auto named = [&](std::string name) {
      std::vector<std::string> n = needles;
      n.push_back(name);
      return n;
    };
    calls.push_back({"Broadcast root " + r,
                     [=] { return ncclBroadcast(b, b, 4, ncclFloat32, root, c, nullptr); },
                     named("ncclBroadcast")});
    calls.push_back({"Bcast root " + r,
                     [=] { return ncclBcast(b, 4, ncclFloat32, root, c, nullptr); },
                     named("ncclBroadcast")});
    calls.push_back({"Reduce root " + r,
                     [=] { return ncclReduce(b, b, 4, ncclFloat32, ncclSum, root, c, nullptr); },
                     named("ncclReduce")});
    calls.push_back({"Gather root " + r,
                     [=] { return ncclGather(b, b, 1, ncclFloat32, root, c, nullptr); },
                     named("ncclGather")});
    calls.push_back({"Scatter root " + r,
                     [=] { return ncclScatter(b, b, 1, ncclFloat32, root, c, nullptr); },
                     named("ncclScatter")});
    calls.push_back({"Send peer " + r,
                     [=] { return ncclSend(b, 4, ncclFloat32, root, c, nullptr); },
                     {"ncclSend", "peer " + r, "outside"}});
    calls.push_back({"Recv peer " + r,
                     [=] { return ncclRecv(b, 4, ncclFloat32, root, c, nullptr); },
                     {"ncclRecv", "peer " + r, "outside"}});
  }
  expectAllRefused(calls);
}

TEST_F(CollectiveBadInput, UnknownDatatypesAreRefused) {
  float* b = buf_.data();
  const ncclComm_t c = comm_;
  std::vector<BadCall> calls;
  // Values C++ can hold in ncclDataType_t (0..15); a C caller's -1 or 99 takes the same path
  // through braid's range check, but making one here would be undefined behaviour.
  for (int type : {static_cast<int>(ncclNumTypes), 13, 15}) {
    const auto t = static_cast<ncclDataType_t>(type);
    const std::string n = std::to_string(type);
    auto needles = [&](std::string name) {
      return std::vector<std::string>{name, "datatype " + n};
    };
    calls.push_back({"AllReduce " + n,
                     [=] { return ncclAllReduce(b, b, 1, t, ncclSum, c, nullptr); },
                     needles("ncclAllReduce")});
    calls.push_back({"ReduceScatter " + n,
                     [=] { return ncclReduceScatter(b, b, 1, t, ncclSum, c, nullptr); },
                     needles("ncclReduceScatter")});
    calls.push_back({"AllGather " + n, [=] { return ncclAllGather(b, b, 1, t, c, nullptr); },
                     needles("ncclAllGather")});
    calls.push_back({"Broadcast " + n, [=] { return ncclBroadcast(b, b, 1, t, 0, c, nullptr); },
                     needles("ncclBroadcast")});
    calls.push_back({"Bcast " + n, [=] { return ncclBcast(b, 1, t, 0, c, nullptr); },
                     needles("ncclBroadcast")});
    calls.push_back({"Reduce " + n, [=] { return ncclReduce(b, b, 1, t, ncclSum, 0, c, nullptr); },
                     needles("ncclReduce")});
    calls.push_back({"Gather " + n, [=] { return ncclGather(b, b, 1, t, 0, c, nullptr); },
                     needles("ncclGather")});
    calls.push_back({"Scatter " + n, [=] { return ncclScatter(b, b, 1, t, 0, c, nullptr); },
                     needles("ncclScatter")});
    calls.push_back({"AlltoAll " + n, [=] { return ncclAlltoAll(b, b, 1, t, c, nullptr); },
                     needles("ncclAlltoAll")});
    calls.push_back(
        {"Send " + n, [=] { return ncclSend(b, 1, t, 0, c, nullptr); }, needles("ncclSend")});
    calls.push_back(
        {"Recv " + n, [=] { return ncclRecv(b, 1, t, 0, c, nullptr); }, needles("ncclRecv")});
  }
  expectAllRefused(calls);
}

TEST_F(CollectiveBadInput, UnknownOpsAreRefused) {
  float* b = buf_.data();
  const ncclComm_t c = comm_;
  std::vector<BadCall> calls;
  // ncclNumOps and 42 are handles ncclRedOpCreatePreMulSum could give out, but none was made;
  // ncclMaxRedOp is past any handle. (Negative values are not ncclRedOp_t values in C++.)
  for (int op : {static_cast<int>(ncclNumOps), 42, static_cast<int>(ncclMaxRedOp)}) {
    const auto o = static_cast<ncclRedOp_t>(op);
    const std::string n = std::to_string(op);
    calls.push_back({"AllReduce op " + n,
                     [=] { return ncclAllReduce(b, b, 4, ncclFloat32, o, c, nullptr); },
                     {"ncclAllReduce", "op " + n}});
    calls.push_back({"ReduceScatter op " + n,
                     [=] { return ncclReduceScatter(b, b, 4, ncclFloat32, o, c, nullptr); },
                     {"ncclReduceScatter", "op " + n}});
    calls.push_back({"Reduce op " + n,
                     [=] { return ncclReduce(b, b, 4, ncclFloat32, o, 0, c, nullptr); },
                     {"ncclReduce", "op " + n}});
  }
  expectAllRefused(calls);
}

TEST_F(CollectiveBadInput, ZeroElementsAcceptNullBuffers) {
  const ncclComm_t c = comm_;
  EXPECT_EQ(ncclReduceScatter(nullptr, nullptr, 0, ncclInt8, ncclProd, c, nullptr), ncclSuccess);
  EXPECT_EQ(ncclAllGather(nullptr, nullptr, 0, ncclInt8, c, nullptr), ncclSuccess);
  EXPECT_EQ(ncclBroadcast(nullptr, nullptr, 0, ncclInt8, 0, c, nullptr), ncclSuccess);
  EXPECT_EQ(ncclBcast(nullptr, 0, ncclInt8, 0, c, nullptr), ncclSuccess);
  EXPECT_EQ(ncclReduce(nullptr, nullptr, 0, ncclInt8, ncclMin, 0, c, nullptr), ncclSuccess);
  EXPECT_EQ(ncclGather(nullptr, nullptr, 0, ncclInt8, 0, c, nullptr), ncclSuccess);
  EXPECT_EQ(ncclScatter(nullptr, nullptr, 0, ncclInt8, 0, c, nullptr), ncclSuccess);
  EXPECT_EQ(ncclAlltoAll(nullptr, nullptr, 0, ncclInt8, c, nullptr), ncclSuccess);
  // A send and a receive still match each other, whatever their size.
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclSend(nullptr, 0, ncclInt8, 0, c, nullptr), ncclSuccess);
  EXPECT_EQ(ncclRecv(nullptr, 0, ncclInt8, 0, c, nullptr), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
}

// ---- premulsum ops ----------------------------------------------------------------------------

TEST_F(CollectiveBadInput, DestroyedPreMulSumOpIsRefused) {
  float scalar = 2.0f;
  ncclRedOp_t op{};
  ASSERT_EQ(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comm_),
            ncclSuccess)
      << ncclGetLastError(comm_);
  float* b = buf_.data();
  const ncclComm_t c = comm_;
  std::vector<float> out(4, 0.0f);
  ASSERT_EQ(ncclAllReduce(b, out.data(), 4, ncclFloat32, op, c, nullptr), ncclSuccess)
      << ncclGetLastError(c);
  EXPECT_EQ(out, std::vector<float>(4, 2.0f));
  ASSERT_EQ(ncclRedOpDestroy(op, c), ncclSuccess) << ncclGetLastError(c);
  const std::string n = std::to_string(static_cast<int>(op));
  expectAllRefused({
      {"AllReduce",
       [=] { return ncclAllReduce(b, b, 4, ncclFloat32, op, c, nullptr); },
       {"ncclAllReduce", "op " + n, "not a live"}},
      {"ReduceScatter",
       [=] { return ncclReduceScatter(b, b, 4, ncclFloat32, op, c, nullptr); },
       {"ncclReduceScatter", "op " + n, "not a live"}},
      {"Reduce",
       [=] { return ncclReduce(b, b, 4, ncclFloat32, op, 0, c, nullptr); },
       {"ncclReduce", "op " + n, "not a live"}},
      // The text names the handle the caller holds, not braid's internal number.
      {"destroyed twice",
       [=] { return ncclRedOpDestroy(op, c); },
       {"ncclRedOpDestroy", "op " + n, "not a live"}},
      // A C caller may pass any int; below 0 is no handle, not a built-in operator.
      {"negative",
       [=] { return ncclRedOpDestroy(static_cast<ncclRedOp_t>(-1), c); },
       {"ncclRedOpDestroy", "unknown reduction op -1"}},
  });
}

TEST_F(CollectiveBadInput, PreMulSumOpUsedWithAnotherDatatypeIsRefused) {
  float scalar = 2.0f;
  ncclRedOp_t op{};
  ASSERT_EQ(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarDevice, comm_),
            ncclSuccess)
      << ncclGetLastError(comm_);
  float* b = buf_.data();
  const ncclComm_t c = comm_;
  expectAllRefused({
      {"AllReduce int32",
       [=] { return ncclAllReduce(b, b, 4, ncclInt32, op, c, nullptr); },
       {"ncclAllReduce", "premulsum", "int32"}},
      {"ReduceScatter float64",
       [=] { return ncclReduceScatter(b, b, 2, ncclFloat64, op, c, nullptr); },
       {"ncclReduceScatter", "premulsum"}},
      {"Reduce bfloat16",
       [=] { return ncclReduce(b, b, 4, ncclBfloat16, op, 0, c, nullptr); },
       {"ncclReduce", "premulsum", "bfloat16"}},
  });
  EXPECT_EQ(ncclRedOpDestroy(op, comm_), ncclSuccess) << ncclGetLastError(comm_);
}

TEST_F(CollectiveBadInput, PreMulSumOpOfAnotherCommunicatorIsRefused) {
  ncclComm_t other = nullptr;
  ASSERT_EQ(ncclCommInitRank(&other, 1, newId(), 0), ncclSuccess) << ncclGetLastError(nullptr);
  float scalar = 3.0f;
  ncclRedOp_t op{};
  ASSERT_EQ(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, other),
            ncclSuccess)
      << ncclGetLastError(other);
  float* b = buf_.data();
  const ncclComm_t c = comm_;
  expectAllRefused({{"AllReduce",
                     [=] { return ncclAllReduce(b, b, 4, ncclFloat32, op, c, nullptr); },
                     {"ncclAllReduce", "not a live"}}});
  EXPECT_EQ(ncclRedOpDestroy(op, other), ncclSuccess) << ncclGetLastError(other);
  EXPECT_EQ(ncclCommDestroy(other), ncclSuccess);
}

TEST_F(CollectiveBadInput, PreMulSumCreationChecksItsArguments) {
  float scalar = 1.0f;
  ncclRedOp_t op{};
  const ncclComm_t c = comm_;
  expectAllRefused({
      {"NULL op",
       [&] { return ncclRedOpCreatePreMulSum(nullptr, &scalar, ncclFloat32, ncclScalarDevice, c); },
       {"ncclRedOpCreatePreMulSum", "op", "NULL"}},
      {"NULL scalar",
       [&] { return ncclRedOpCreatePreMulSum(&op, nullptr, ncclFloat32, ncclScalarDevice, c); },
       {"ncclRedOpCreatePreMulSum", "scalar", "NULL"}},
      // (An unknown residence cannot be written in C++: ncclScalarResidence_t holds only 0 and 1.)
      {"unknown datatype",
       [&] {
         return ncclRedOpCreatePreMulSum(&op, &scalar, static_cast<ncclDataType_t>(12),
                                         ncclScalarDevice, c);
       },
       {"ncclRedOpCreatePreMulSum", "datatype 12"}},
      {"NULL comm",
       [&] {
         return ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarDevice, nullptr);
       },
       {"ncclRedOpCreatePreMulSum", "comm"}},
      {"destroy a built-in op",
       [&] { return ncclRedOpDestroy(ncclSum, c); },
       {"ncclRedOpDestroy", "built-in"}},
      {"destroy on NULL comm",
       [&] { return ncclRedOpDestroy(ncclNumOps, nullptr); },
       {"ncclRedOpDestroy", "comm"}},
  });
}

// ---- NULL where the rank does not use the buffer ----------------------------------------------

TEST(CollectiveUnusedBuffers, NonRootsMayPassNullForBuffersTheyDoNotUse) {
  constexpr int kRanks = 4;
  constexpr size_t kCount = 513;
  std::vector<ncclComm_t> comms(kRanks);
  ASSERT_EQ(ncclCommInitAll(comms.data(), kRanks, nullptr), ncclSuccess)
      << ncclGetLastError(nullptr);
  const int root = 1;
  runThreads(kRanks, [&](int r) {
    const bool isRoot = r == root;
    std::vector<int64_t> mine(kCount), all(kRanks * kCount), out(kRanks * kCount, -1);
    for (size_t i = 0; i < kCount; ++i) mine[i] = r * 1000003LL + i;
    for (size_t i = 0; i < all.size(); ++i) all[i] = r * 1000003LL + i;
    ncclComm_t c = comms[r];
    // Broadcast: only the root reads a send buffer.
    ASSERT_EQ(ncclBroadcast(isRoot ? mine.data() : nullptr, out.data(), kCount, ncclInt64, root, c,
                            nullptr),
              ncclSuccess)
        << ncclGetLastError(c);
    for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(out[i], root * 1000003LL + i);
    // Reduce: only the root writes a receive buffer.
    out.assign(out.size(), -1);
    ASSERT_EQ(ncclReduce(mine.data(), isRoot ? out.data() : nullptr, kCount, ncclInt64, ncclSum,
                         root, c, nullptr),
              ncclSuccess)
        << ncclGetLastError(c);
    for (size_t i = 0; isRoot && i < kCount; ++i) {
      ASSERT_EQ(out[i], (0 + 1 + 2 + 3) * 1000003LL + kRanks * static_cast<int64_t>(i));
    }
    // Gather: only the root receives.
    out.assign(out.size(), -1);
    ASSERT_EQ(
        ncclGather(mine.data(), isRoot ? out.data() : nullptr, kCount, ncclInt64, root, c, nullptr),
        ncclSuccess)
        << ncclGetLastError(c);
    for (size_t i = 0; isRoot && i < out.size(); ++i) {
      ASSERT_EQ(out[i], static_cast<int64_t>(i / kCount) * 1000003LL + i % kCount);
    }
    // Scatter: only the root sends.
    out.assign(out.size(), -1);
    ASSERT_EQ(
        ncclScatter(isRoot ? all.data() : nullptr, out.data(), kCount, ncclInt64, root, c, nullptr),
        ncclSuccess)
        << ncclGetLastError(c);
    for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(out[i], root * 1000003LL + r * kCount + i);
  });
  for (ncclComm_t c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
}

}  // namespace
