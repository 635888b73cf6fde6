// In-place collectives at NCCL's offsets, spelled out on small int32 patterns, and premulsum
// ops through the C API.
//
// In place, NCCL writes only the output: reduce_scatter with recvbuff == sendbuff + rank * count
// leaves the other blocks of sendbuff as they were; all_gather with sendbuff == recvbuff +
// rank * count fills every block; a non-root's buffer of an in-place reduce keeps its input;
// gather at the root with sendbuff == recvbuff + root * count, and scatter at the root with
// recvbuff == sendbuff + root * count, leave the root's own block where it is. Every buffer here
// has margins on both sides that must stay untouched. The matrix (collectives_matrix_test.cc)
// checks the same rules on random data for every type; these say them where a reader finds them.
//
// premulsum: each rank's input times that rank's scalar, summed. A HostImmediate scalar is read
// when the op is made; a Device scalar is read through its pointer when the collective runs, so
// changing it between two calls changes the result.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nccl.h"
#include "support/multiprocess.h"

namespace collectives_aliasing_test {

using braid::testing::runThreads;

constexpr int kRanks = 4;
constexpr size_t kCount = 1001;
/// Elements on each side of a buffer that no call may touch.
constexpr size_t kMargin = 16;
constexpr int32_t kUntouched = 0x7eadbeef;

/// Rank r's input element i (the reductions below sum these without overflow).
int32_t value(int r, size_t i) { return static_cast<int32_t>(r * 100003 + i * 7 + 1); }

/// A buffer of `elems` elements between margins, all kUntouched.
class Padded {
 public:
  explicit Padded(size_t elems) : storage_(elems + 2 * kMargin, kUntouched) {}
  int32_t* data() { return storage_.data() + kMargin; }
  int32_t& operator[](size_t i) { return data()[i]; }
  bool marginsIntact() const {
    for (size_t i = 0; i < kMargin; ++i) {
      if (storage_[i] != kUntouched || storage_[storage_.size() - 1 - i] != kUntouched) {
        return false;
      }
    }
    return true;
  }

 private:
  std::vector<int32_t> storage_;
};

class Aliasing : public ::testing::Test {
 protected:
  void SetUp() override {
    comms_.resize(kRanks);
    ASSERT_EQ(ncclCommInitAll(comms_.data(), kRanks, nullptr), ncclSuccess)
        << ncclGetLastError(nullptr);
  }
  void TearDown() override {
    for (ncclComm_t c : comms_) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  }
  std::vector<ncclComm_t> comms_;
};

TEST_F(Aliasing, ReduceScatterInPlaceWritesOnlyTheRanksBlock) {
  runThreads(kRanks, [&](int r) {
    Padded buf(kRanks * kCount);
    for (size_t i = 0; i < kRanks * kCount; ++i) buf[i] = value(r, i);
    int32_t* recv = buf.data() + r * kCount;
    ASSERT_EQ(ncclReduceScatter(buf.data(), recv, kCount, ncclInt32, ncclSum, comms_[r], nullptr),
              ncclSuccess)
        << ncclGetLastError(comms_[r]);
    for (size_t i = 0; i < kRanks * kCount; ++i) {
      int32_t expected = value(r, i);
      if (i / kCount == static_cast<size_t>(r)) {
        expected = 0;
        for (int q = 0; q < kRanks; ++q) expected += value(q, i);
      }
      ASSERT_EQ(buf[i], expected) << "rank " << r << " element " << i;
    }
    EXPECT_TRUE(buf.marginsIntact()) << "rank " << r;
  });
}

TEST_F(Aliasing, AllGatherInPlaceFillsEveryBlock) {
  runThreads(kRanks, [&](int r) {
    Padded buf(kRanks * kCount);
    for (size_t i = 0; i < kCount; ++i) buf[r * kCount + i] = value(r, i);
    ASSERT_EQ(
        ncclAllGather(buf.data() + r * kCount, buf.data(), kCount, ncclInt32, comms_[r], nullptr),
        ncclSuccess)
        << ncclGetLastError(comms_[r]);
    for (size_t i = 0; i < kRanks * kCount; ++i) {
      ASSERT_EQ(buf[i], value(static_cast<int>(i / kCount), i % kCount)) << "rank " << r;
    }
    EXPECT_TRUE(buf.marginsIntact()) << "rank " << r;
  });
}

TEST_F(Aliasing, ReduceInPlaceLeavesEveryNonRootsInput) {
  for (int root = 0; root < kRanks; ++root) {
    runThreads(kRanks, [&](int r) {
      Padded buf(kCount);
      for (size_t i = 0; i < kCount; ++i) buf[i] = value(r, i);
      ASSERT_EQ(
          ncclReduce(buf.data(), buf.data(), kCount, ncclInt32, ncclMax, root, comms_[r], nullptr),
          ncclSuccess)
          << ncclGetLastError(comms_[r]);
      for (size_t i = 0; i < kCount; ++i) {
        // value() grows with the rank: the maximum is the last rank's.
        ASSERT_EQ(buf[i], r == root ? value(kRanks - 1, i) : value(r, i))
            << "root " << root << " rank " << r << " element " << i;
      }
      EXPECT_TRUE(buf.marginsIntact()) << "rank " << r;
    });
  }
}

TEST_F(Aliasing, GatherInPlaceAtTheRootsOffset) {
  for (int root = 0; root < kRanks; ++root) {
    runThreads(kRanks, [&](int r) {
      // The root's contribution already sits in its block; other ranks pass their own input and
      // no receive buffer, which they do not use.
      Padded buf(r == root ? kRanks * kCount : kCount);
      int32_t* send = r == root ? buf.data() + root * kCount : buf.data();
      for (size_t i = 0; i < kCount; ++i) send[i] = value(r, i);
      ASSERT_EQ(ncclGather(send, r == root ? buf.data() : nullptr, kCount, ncclInt32, root,
                           comms_[r], nullptr),
                ncclSuccess)
          << ncclGetLastError(comms_[r]);
      for (size_t i = 0; i < (r == root ? kRanks * kCount : kCount); ++i) {
        const int from = r == root ? static_cast<int>(i / kCount) : r;
        ASSERT_EQ(buf[i], value(from, i % kCount)) << "root " << root << " rank " << r;
      }
      EXPECT_TRUE(buf.marginsIntact()) << "rank " << r;
    });
  }
}

TEST_F(Aliasing, ScatterInPlaceAtTheRootsOffset) {
  for (int root = 0; root < kRanks; ++root) {
    runThreads(kRanks, [&](int r) {
      // The root's whole send buffer stays as it was (its own block is its receive buffer).
      Padded buf(r == root ? kRanks * kCount : kCount);
      if (r == root) {
        for (size_t i = 0; i < kRanks * kCount; ++i) buf[i] = value(root, i);
      }
      int32_t* recv = r == root ? buf.data() + root * kCount : buf.data();
      ASSERT_EQ(ncclScatter(r == root ? buf.data() : nullptr, recv, kCount, ncclInt32, root,
                            comms_[r], nullptr),
                ncclSuccess)
          << ncclGetLastError(comms_[r]);
      for (size_t i = 0; i < (r == root ? kRanks * kCount : kCount); ++i) {
        ASSERT_EQ(buf[i], value(root, r == root ? i : r * kCount + i))
            << "root " << root << " rank " << r;
      }
      EXPECT_TRUE(buf.marginsIntact()) << "rank " << r;
    });
  }
}

TEST_F(Aliasing, BroadcastAndBcastInPlace) {
  for (int root = 0; root < kRanks; ++root) {
    for (bool legacy : {false, true}) {
      runThreads(kRanks, [&](int r) {
        Padded buf(kCount);
        for (size_t i = 0; i < kCount; ++i) buf[i] = value(r, i);
        const ncclResult_t result =
            legacy ? ncclBcast(buf.data(), kCount, ncclInt32, root, comms_[r], nullptr)
                   : ncclBroadcast(buf.data(), buf.data(), kCount, ncclInt32, root, comms_[r],
                                   nullptr);
        ASSERT_EQ(result, ncclSuccess) << ncclGetLastError(comms_[r]);
        for (size_t i = 0; i < kCount; ++i) {
          ASSERT_EQ(buf[i], value(root, i)) << "root " << root << " rank " << r;
        }
        EXPECT_TRUE(buf.marginsIntact()) << "rank " << r;
      });
    }
  }
}

TEST_F(Aliasing, AllReduceInPlace) {
  runThreads(kRanks, [&](int r) {
    Padded buf(kCount);
    for (size_t i = 0; i < kCount; ++i) buf[i] = value(r, i);
    ASSERT_EQ(ncclAllReduce(buf.data(), buf.data(), kCount, ncclInt32, ncclMin, comms_[r], nullptr),
              ncclSuccess)
        << ncclGetLastError(comms_[r]);
    for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(buf[i], value(0, i)) << "rank " << r;
    EXPECT_TRUE(buf.marginsIntact()) << "rank " << r;
  });
}

// ---- premulsum --------------------------------------------------------------------------------

/// Rank r's scalar; with small integer inputs every product and sum is exact in float32.
float scalarOf(int r) { return 0.5f * static_cast<float>(r) + 0.25f; }
float input(int r, size_t i) { return static_cast<float>(static_cast<int>(i % 13) - 6 + r); }

/// Expected element i of sum over ranks of scale(r) * input(r, i).
template <typename Scale>
float scaledSum(size_t i, Scale scale) {
  float sum = 0;
  for (int r = 0; r < kRanks; ++r) sum += scale(r) * input(r, i);
  return sum;
}

class PreMulSum : public Aliasing {
 protected:
  /// Runs an all-reduce with rank r's op ops[r] and checks it against scale(r).
  template <typename Scale>
  void allReduceWith(const std::vector<ncclRedOp_t>& ops, Scale scale) {
    runThreads(kRanks, [&](int r) {
      std::vector<float> send(kCount), recv(kCount, -1.0f);
      for (size_t i = 0; i < kCount; ++i) send[i] = input(r, i);
      ASSERT_EQ(
          ncclAllReduce(send.data(), recv.data(), kCount, ncclFloat32, ops[r], comms_[r], nullptr),
          ncclSuccess)
          << ncclGetLastError(comms_[r]);
      for (size_t i = 0; i < kCount; ++i) {
        ASSERT_EQ(recv[i], scaledSum(i, scale)) << "rank " << r << " element " << i;
      }
    });
  }

  std::vector<ncclRedOp_t> makeOps(std::vector<float>& scalars, ncclScalarResidence_t residence) {
    std::vector<ncclRedOp_t> ops(kRanks);
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_EQ(ncclRedOpCreatePreMulSum(&ops[r], &scalars[r], ncclFloat32, residence, comms_[r]),
                ncclSuccess)
          << ncclGetLastError(comms_[r]);
      EXPECT_GE(static_cast<int>(ops[r]), static_cast<int>(ncclNumOps));
    }
    return ops;
  }

  void destroyOps(const std::vector<ncclRedOp_t>& ops) {
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_EQ(ncclRedOpDestroy(ops[r], comms_[r]), ncclSuccess) << ncclGetLastError(comms_[r]);
    }
  }
};

TEST_F(PreMulSum, HostImmediateScalarIsReadWhenTheOpIsMade) {
  std::vector<float> scalars(kRanks);
  for (int r = 0; r < kRanks; ++r) scalars[r] = scalarOf(r);
  const std::vector<ncclRedOp_t> ops = makeOps(scalars, ncclScalarHostImmediate);
  allReduceWith(ops, scalarOf);
  // The op holds the value it was made with: changing the variable changes nothing.
  for (float& s : scalars) s = 100.0f;
  allReduceWith(ops, scalarOf);
  destroyOps(ops);
}

TEST_F(PreMulSum, DeviceScalarIsReadWhenTheCollectiveRuns) {
  std::vector<float> scalars(kRanks);
  for (int r = 0; r < kRanks; ++r) scalars[r] = scalarOf(r);
  const std::vector<ncclRedOp_t> ops = makeOps(scalars, ncclScalarDevice);
  allReduceWith(ops, scalarOf);
  // The same ops, new values behind the pointers: the next call uses them.
  for (int r = 0; r < kRanks; ++r) scalars[r] = -2.0f * scalarOf(r);
  allReduceWith(ops, [](int r) { return -2.0f * scalarOf(r); });
  destroyOps(ops);
}

TEST_F(PreMulSum, ReduceScatterAndReduceScaleEachRanksInputToo) {
  std::vector<float> scalars(kRanks);
  for (int r = 0; r < kRanks; ++r) scalars[r] = scalarOf(r);
  const std::vector<ncclRedOp_t> ops = makeOps(scalars, ncclScalarDevice);
  const int root = 2;
  runThreads(kRanks, [&](int r) {
    std::vector<float> send(kRanks * kCount), block(kCount, -1.0f), reduced(kCount, -1.0f);
    for (size_t i = 0; i < send.size(); ++i) send[i] = input(r, i);
    ASSERT_EQ(ncclReduceScatter(send.data(), block.data(), kCount, ncclFloat32, ops[r], comms_[r],
                                nullptr),
              ncclSuccess)
        << ncclGetLastError(comms_[r]);
    ASSERT_EQ(ncclReduce(send.data(), reduced.data(), kCount, ncclFloat32, ops[r], root, comms_[r],
                         nullptr),
              ncclSuccess)
        << ncclGetLastError(comms_[r]);
    for (size_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(block[i], scaledSum(r * kCount + i, scalarOf)) << "rank " << r;
      ASSERT_EQ(reduced[i], r == root ? scaledSum(i, scalarOf) : -1.0f) << "rank " << r;
    }
  });
  destroyOps(ops);
}

TEST_F(PreMulSum, IntegerScalarsWrapLikeTheirType) {
  // int8: 100 * 3 wraps to 44 before the sum, as NCCL's rounded-to-type product does.
  std::vector<int8_t> scalars(kRanks, 3);
  std::vector<ncclRedOp_t> ops(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_EQ(ncclRedOpCreatePreMulSum(&ops[r], &scalars[r], ncclInt8, ncclScalarHostImmediate,
                                       comms_[r]),
              ncclSuccess)
        << ncclGetLastError(comms_[r]);
  }
  runThreads(kRanks, [&](int r) {
    int8_t send = 100, recv = 0;
    ASSERT_EQ(ncclAllReduce(&send, &recv, 1, ncclInt8, ops[r], comms_[r], nullptr), ncclSuccess)
        << ncclGetLastError(comms_[r]);
    EXPECT_EQ(recv, static_cast<int8_t>(kRanks * 44)) << "rank " << r;
  });
  destroyOps(ops);
}

}  // namespace collectives_aliasing_test
