// BRAID_CHECK_CALLS=1 (src/comm/calls_check.cc), 3 ranks in processes: calls that agree run and
// give the right result; a rank that calls with another count, type, operator, root or
// collective makes every rank's call fail with ncclInvalidUsage naming the ranks and their calls,
// nothing moves, and the next call that agrees runs as if nothing had happened.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"
#include "support/multiprocess.h"

namespace {

constexpr int kRanks = 3;

/// The last error text, for checks.
std::string lastError(ncclComm_t comm) {
  const char* text = ncclGetLastError(comm);
  return text == nullptr ? "" : text;
}

/// An all_reduce of `count` floats that every rank expects to work: each rank's input is rank+1,
/// so every element of the sum is 6.
void expectAgreedAllReduce(ncclComm_t comm, int rank, size_t count) {
  std::vector<float> in(count, static_cast<float>(rank + 1));
  std::vector<float> out(count, -1.0f);
  ASSERT_EQ(ncclAllReduce(in.data(), out.data(), count, ncclFloat32, ncclSum, comm, nullptr),
            ncclSuccess)
      << lastError(comm);
  for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[i], 6.0f) << "element " << i;
}

TEST(CheckCalls, MismatchedCallsFailOnEveryRankNamingThemAndTheCommunicatorCarriesOn) {
  const ncclUniqueId id = braid::testing::newId();
  braid::testing::runProcesses(kRanks, [&](int rank) {
    setenv("BRAID_CHECK_CALLS", "1", 1);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, kRanks, id, rank), ncclSuccess) << lastError(nullptr);
    expectAgreedAllReduce(comm, rank, 1000);

    // Rank 1 asks for another count: nobody's buffer changes.
    std::vector<float> in(2048, 1.0f), out(2048, -1.0f);
    const size_t count = rank == 1 ? 2048 : 1024;
    EXPECT_EQ(ncclAllReduce(in.data(), out.data(), count, ncclFloat32, ncclSum, comm, nullptr),
              ncclInvalidUsage);
    std::string error = lastError(comm);
    EXPECT_NE(error.find("ranks 0,2: call 1: AllReduce of 1024 x float sum"), std::string::npos)
        << error;
    EXPECT_NE(error.find("rank 1: call 1: AllReduce of 2048 x float sum"), std::string::npos)
        << error;
    EXPECT_EQ(out[0], -1.0f) << "nothing may move when the calls differ";

    expectAgreedAllReduce(comm, rank, 777);  // and the communicator carries on

    // Another root on rank 2.
    const int root = rank == 2 ? 1 : 0;
    EXPECT_EQ(ncclBroadcast(in.data(), out.data(), 16, ncclFloat32, root, comm, nullptr),
              ncclInvalidUsage);
    error = lastError(comm);
    EXPECT_NE(error.find("ranks 0-1: call 3: Broadcast of 16 x float, root 0"), std::string::npos)
        << error;
    EXPECT_NE(error.find("rank 2: call 3: Broadcast of 16 x float, root 1"), std::string::npos)
        << error;

    // Another type and operator on rank 0, another collective on rank 1: three calls.
    ncclResult_t result = ncclSuccess;
    if (rank == 0) {
      result = ncclAllReduce(in.data(), out.data(), 8, ncclInt32, ncclMax, comm, nullptr);
    } else if (rank == 1) {
      result = ncclReduce(in.data(), out.data(), 8, ncclFloat32, ncclSum, 0, comm, nullptr);
    } else {
      result = ncclAllReduce(in.data(), out.data(), 8, ncclFloat32, ncclSum, comm, nullptr);
    }
    EXPECT_EQ(result, ncclInvalidUsage);
    error = lastError(comm);
    EXPECT_NE(error.find("rank 0: call 4: AllReduce of 8 x int32 max"), std::string::npos) << error;
    EXPECT_NE(error.find("rank 1: call 4: Reduce of 8 x float sum, root 0"), std::string::npos)
        << error;
    EXPECT_NE(error.find("rank 2: call 4: AllReduce of 8 x float sum"), std::string::npos) << error;

    expectAgreedAllReduce(comm, rank, 1 << 16);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

}  // namespace
