// ncclAllReduce across real processes (fork) and threads, on random inputs
// from a printed seed, checked against a reference computed in the test:
// exact for integers (with NCCL's wrap-around), and for float32 within the
// rounding that summing N values in any order can produce.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "nccl.h"
#include "support/multiprocess.h"
#include "support/uniform_real.h"

namespace allreduce_test {

uint64_t testSeed() {
  static const uint64_t seed = [] {
    const char* s = getenv("BRAID_TEST_SEED");
    uint64_t v = s ? strtoull(s, nullptr, 0) : std::random_device{}();
    printf("[ braid ] random seed %llu (set BRAID_TEST_SEED to repeat)\n",
           static_cast<unsigned long long>(v));
    return v;
  }();
  return seed;
}

template <typename T>
std::vector<T> rankInput(int rank, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed * 1000003 + rank);
  std::vector<T> v(count);
  if constexpr (std::is_floating_point<T>::value) {
    for (auto& x : v) x = static_cast<T>(braid::testing::uniformReal(rng, -1000, 1000));
  } else {
    for (auto& x : v) x = static_cast<T>(rng());
  }
  return v;
}

// Checks `out` against the sum of every rank's input.
template <typename T>
void expectSum(const std::vector<T>& out, int nranks, uint64_t seed, int rank) {
  const size_t count = out.size();
  std::vector<std::vector<T>> inputs;
  for (int r = 0; r < nranks; ++r) inputs.push_back(rankInput<T>(r, count, seed));
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    if constexpr (std::is_floating_point<T>::value) {
      double ref = 0, mag = 0;
      for (int r = 0; r < nranks; ++r) {
        ref += inputs[r][i];
        mag += std::fabs(static_cast<double>(inputs[r][i]));
      }
      double tol = nranks * mag * std::numeric_limits<T>::epsilon();
      if (std::fabs(out[i] - ref) > tol) {
        if (wrong++ < 3)
          ADD_FAILURE() << "rank " << rank << " element " << i << ": " << out[i] << " vs " << ref;
      }
    } else {
      using U = std::make_unsigned_t<T>;
      U ref = 0;
      for (int r = 0; r < nranks; ++r) ref = static_cast<U>(ref + static_cast<U>(inputs[r][i]));
      if (static_cast<U>(out[i]) != ref && wrong++ < 3) {
        ADD_FAILURE() << "rank " << rank << " element " << i;
      }
    }
  }
  EXPECT_EQ(wrong, 0u) << "rank " << rank << " count " << count;
}

template <typename T>
ncclDataType_t ncclTypeOf();
template <>
ncclDataType_t ncclTypeOf<float>() {
  return ncclFloat32;
}
template <>
ncclDataType_t ncclTypeOf<int32_t>() {
  return ncclInt32;
}
template <>
ncclDataType_t ncclTypeOf<double>() {
  return ncclFloat64;
}

template <typename T>
void allReduceOnRank(ncclComm_t comm, int rank, int nranks, size_t count, uint64_t seed) {
  std::vector<T> in = rankInput<T>(rank, count, seed);
  std::vector<T> out(count, T(0));
  ASSERT_EQ(ncclAllReduce(in.data(), out.data(), count, ncclTypeOf<T>(), ncclSum, comm, nullptr),
            ncclSuccess)
      << ncclGetLastError(comm);
  expectSum(out, nranks, seed, rank);
  // In place: the input is overwritten with the result.
  ASSERT_EQ(ncclAllReduce(in.data(), in.data(), count, ncclTypeOf<T>(), ncclSum, comm, nullptr),
            ncclSuccess)
      << ncclGetLastError(comm);
  expectSum(in, nranks, seed, rank);
}

const size_t kCounts[] = {1, 7, 1000, 65537, (1 << 20) + 3};

class AllReduceProcesses : public ::testing::TestWithParam<int> {};

TEST_P(AllReduceProcesses, MatchesReferenceInAndOutOfPlace) {
  const int nranks = GetParam();
  const uint64_t seed = testSeed();
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runProcesses(nranks, [&](int rank) {
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, nranks, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    for (size_t count : kCounts) {
      SCOPED_TRACE("count " + std::to_string(count));
      allReduceOnRank<float>(comm, rank, nranks, count, seed + count);
      allReduceOnRank<int32_t>(comm, rank, nranks, count, seed + count + 1);
    }
    allReduceOnRank<double>(comm, rank, nranks, 4099, seed + 7);
    // Zero elements is a no-op that still succeeds.
    EXPECT_EQ(ncclAllReduce(nullptr, nullptr, 0, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclCommFinalize(comm), ncclSuccess);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

// Tiny calls repeated with one shape run in the tiny lane after the first (comm/ways/tiny_lane.cc):
// every call's result is checked while the shape changes every 25 calls (count, type,
// operator), and back, in place and out of place.
TEST_P(AllReduceProcesses, RepeatedTinyCallsChangingShape) {
  const int nranks = GetParam();
  const uint64_t seed = testSeed();
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runProcesses(nranks, [&](int rank) {
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, nranks, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    for (int i = 0; i < 250; ++i) {
      SCOPED_TRACE("call " + std::to_string(i));
      const uint64_t callSeed = seed + 7919 * i;
      switch (i / 25 % 5) {
        case 0:
          allReduceOnRank<float>(comm, rank, nranks, 2, callSeed);
          break;
        case 1:
          allReduceOnRank<int32_t>(comm, rank, nranks, 3, callSeed);
          break;
        case 2: {
          // max: exact, and a different operator of the same count and type as case 0.
          std::vector<float> in = rankInput<float>(rank, 2, callSeed);
          std::vector<float> out(2, 0.0f);
          ASSERT_EQ(ncclAllReduce(in.data(), out.data(), 2, ncclFloat32, ncclMax, comm, nullptr),
                    ncclSuccess)
              << ncclGetLastError(comm);
          for (size_t e = 0; e < 2; ++e) {
            float want = rankInput<float>(0, 2, callSeed)[e];
            for (int r = 1; r < nranks; ++r)
              want = std::max(want, rankInput<float>(r, 2, callSeed)[e]);
            EXPECT_EQ(out[e], want) << "rank " << rank << " element " << e;
          }
          break;
        }
        case 3:
          allReduceOnRank<double>(comm, rank, nranks, 1, callSeed);
          break;
        default:
          allReduceOnRank<float>(comm, rank, nranks, 5, callSeed);
          break;
      }
    }
    EXPECT_EQ(ncclCommFinalize(comm), ncclSuccess);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

INSTANTIATE_TEST_SUITE_P(Forked, AllReduceProcesses, ::testing::Values(2, 3, 4, 8),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

TEST(AllReduceThreads, InitAllRanksAsThreads) {
  const int nranks = 5;
  const uint64_t seed = testSeed();
  std::vector<ncclComm_t> comms(nranks);
  ASSERT_EQ(ncclCommInitAll(comms.data(), nranks, nullptr), ncclSuccess);
  braid::testing::runThreads(nranks, [&](int rank) {
    int r = -1;
    EXPECT_EQ(ncclCommUserRank(comms[rank], &r), ncclSuccess);
    EXPECT_EQ(r, rank);
    for (size_t count : {size_t(3), size_t(100003)}) {
      allReduceOnRank<float>(comms[rank], rank, nranks, count, seed + count);
    }
  });
  for (auto c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
}

TEST(AllReduceThreads, SeveralChannelsAndSmallFifo) {
  // Many rounds and slices per step, over two channels.
  setenv("BRAID_NCHANNELS", "2", 1);
  setenv("BRAID_BUFFSIZE", "64K", 1);
  const int nranks = 3;
  std::vector<ncclComm_t> comms(nranks);
  ncclResult_t init = ncclCommInitAll(comms.data(), nranks, nullptr);
  unsetenv("BRAID_NCHANNELS");
  unsetenv("BRAID_BUFFSIZE");
  ASSERT_EQ(init, ncclSuccess) << ncclGetLastError(nullptr);
  const uint64_t seed = testSeed();
  braid::testing::runThreads(
      nranks, [&](int rank) { allReduceOnRank<int32_t>(comms[rank], rank, nranks, 200003, seed); });
  for (auto c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
}

}  // namespace allreduce_test
