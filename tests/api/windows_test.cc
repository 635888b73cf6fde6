// windows_test.cc: memory windows and the one-sided calls on them, which braid declines as NCCL
// 2.30 declines them on a communicator without symmetric memory: a window registered is NULL,
// its user pointer NULL, and put, signal and wait fail with ncclInvalidArgument (no host RMA),
// saying so; with a NULL communicator each fails without crashing.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"

namespace {

using braid::testing::failsWith;
using braid::testing::OneRankTest;

using WindowsOneRank = OneRankTest;

// braid has no symmetric memory: windows are declined as NCCL declines them on a communicator
// without it (success, a NULL window, a NULL user pointer), and so are the one-sided calls, as
// NCCL's without host RMA (ncclInvalidArgument, saying so).
TEST_F(WindowsOneRank, AreDeclinedAsNcclDeclinesThemWithoutSymmetricMemory) {
  std::vector<float> send(64, 1.0f), recv(64, 0.0f);
  int marker = 0;
  ncclWindow_t window = reinterpret_cast<ncclWindow_t>(&marker);
  ASSERT_EQ(ncclCommWindowRegister(comm_, recv.data(), 8 * sizeof(float), &window,
                                   NCCL_WIN_COLL_SYMMETRIC),
            ncclSuccess)
      << ncclGetLastError(comm_);
  EXPECT_EQ(window, nullptr);
  void* user = &marker;
  EXPECT_EQ(ncclWinGetUserPtr(comm_, window, &user), ncclSuccess);
  EXPECT_EQ(user, nullptr);
  EXPECT_EQ(ncclCommWindowDeregister(comm_, window), ncclSuccess);
  // Without symmetric memory there is no host RMA (NCCL's answer on such a communicator).
  EXPECT_TRUE(failsWith(
      [&] {
        return ncclPutSignal(send.data(), 4, ncclFloat, 0, window, 0, 0, 0, 0, comm_, nullptr);
      },
      ncclInvalidArgument, {"ncclPutSignal", "host RMA is not supported"}, comm_));
  EXPECT_TRUE(failsWith([&] { return ncclSignal(0, 0, 0, 0, comm_, nullptr); }, ncclInvalidArgument,
                        {"ncclSignal", "host RMA is not supported"}, comm_));
  ncclWaitSignalDesc_t desc = {1, 0, 0, 0};
  EXPECT_TRUE(failsWith([&] { return ncclWaitSignal(1, &desc, comm_, nullptr); },
                        ncclInvalidArgument, {"ncclWaitSignal", "host RMA is not supported"},
                        comm_));
  EXPECT_TRUE(failsWith(
      [&] { return ncclCommWindowRegister(comm_, nullptr, 64, &window, NCCL_WIN_DEFAULT); },
      ncclInvalidArgument, {"NULL"}, comm_));
  // None of it broke the communicator.
  EXPECT_EQ(allReduce(send.data(), recv.data(), 2), ncclSuccess) << ncclGetLastError(comm_);
}

TEST(WindowsNullComm, EveryCallFailsWithoutCrashing) {
  float data[4] = {};
  ncclWindow_t window = nullptr;
  void* user = nullptr;
  ncclWaitSignalDesc_t desc = {1, 0, 0, 0};
  const std::vector<std::function<ncclResult_t()>> calls = {
      [&] { return ncclCommWindowRegister(nullptr, data, sizeof data, &window, 0); },
      [&] { return ncclCommWindowDeregister(nullptr, window); },
      [&] { return ncclWinGetUserPtr(nullptr, window, &user); },
      [&] { return ncclPutSignal(data, 1, ncclFloat, 0, window, 0, 0, 0, 0, nullptr, nullptr); },
      [&] { return ncclSignal(0, 0, 0, 0, nullptr, nullptr); },
      [&] { return ncclWaitSignal(1, &desc, nullptr, nullptr); },
  };
  for (const auto& call : calls) EXPECT_TRUE(failsWith(call, ncclInvalidArgument, {"comm"}));
}

}  // namespace
