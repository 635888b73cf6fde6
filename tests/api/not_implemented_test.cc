// not_implemented_test.cc: the C API entry points braid does not implement yet.
//
// Each must fail with ncclInvalidUsage and a ncclGetLastError() text that says "not implemented"
// and names the entry point, when called with arguments that would otherwise be valid; with a NULL
// communicator it must fail without crashing. Valid arguments the host path cannot serve yet
// (ncclAvg, 16-bit and 8-bit floats) must say "not implemented" too, not "invalid argument".
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"

namespace {

using braid::testing::failsWith;
using braid::testing::OneRankTest;

using NotImplementedOneRank = OneRankTest;

/// One not-yet-implemented entry point, called with arguments that would otherwise be valid.
struct Unimplemented {
  const char* name;
  std::function<ncclResult_t(ncclComm_t)> call;
};

/// Arguments for the calls of unimplementedEntryPoints: buffers large enough for every
/// collective on one rank, and the outputs, alive as long as the calls are.
struct Scratch {
  std::vector<float> send = std::vector<float>(64, 1.0f);
  std::vector<float> recv = std::vector<float>(64, 0.0f);
  float scalar = 2.0f;
  ncclUniqueId id{};
  ncclComm_t newComm = nullptr;
  void* ptr = nullptr;
  ncclWindow_t window = nullptr;
  ncclRedOp_t op = ncclSum;
};

std::vector<Unimplemented> unimplementedEntryPoints(Scratch& x) {
  float* r = x.recv.data();
  const size_t bytes = 8 * sizeof(float);
  Scratch* p = &x;
  (void)r, (void)bytes, (void)p;
  // clang-format off
  return {
      {"ncclSignal", [](ncclComm_t c) { return ncclSignal(0, 0, 0, 0, c, nullptr); }},
      {"ncclWaitSignal", [](ncclComm_t c) {
         ncclWaitSignalDesc_t desc = {1, 0, 0, 0};
         return ncclWaitSignal(1, &desc, c, nullptr); }},
  };
  // clang-format on
}

// braid has no symmetric memory: windows are declined as NCCL declines them on a communicator
// without it (success, a NULL window, a NULL user pointer), and the one-sided put, which needs
// a window, says why it has none.
TEST_F(NotImplementedOneRank, WindowsAreDeclinedAsNcclDeclinesThem) {
  Scratch x;
  ncclWindow_t window = reinterpret_cast<ncclWindow_t>(&x);
  ASSERT_EQ(ncclCommWindowRegister(comm_, x.recv.data(), 8 * sizeof(float), &window,
                                   NCCL_WIN_COLL_SYMMETRIC),
            ncclSuccess)
      << ncclGetLastError(comm_);
  EXPECT_EQ(window, nullptr);
  void* user = &x;
  EXPECT_EQ(ncclWinGetUserPtr(comm_, window, &user), ncclSuccess);
  EXPECT_EQ(user, nullptr);
  EXPECT_EQ(ncclCommWindowDeregister(comm_, window), ncclSuccess);
  EXPECT_TRUE(failsWith(
      [&] {
        return ncclPutSignal(x.send.data(), 4, ncclFloat, 0, window, 0, 0, 0, 0, comm_, nullptr);
      },
      ncclInvalidArgument, {"ncclPutSignal", "no symmetric memory"}, comm_));
  EXPECT_TRUE(failsWith(
      [&] { return ncclCommWindowRegister(comm_, nullptr, 64, &window, NCCL_WIN_DEFAULT); },
      ncclInvalidArgument, {"NULL"}, comm_));
}

TEST_F(NotImplementedOneRank, EveryEntryPointSaysSo) {
  Scratch scratch;
  for (const Unimplemented& entry : unimplementedEntryPoints(scratch)) {
    SCOPED_TRACE(entry.name);
    EXPECT_TRUE(failsWith([&] { return entry.call(comm_); }, ncclInvalidUsage,
                          {"not implemented", entry.name}, comm_));
  }
  // None of them broke the communicator.
  std::vector<float> data = {1.0f, 2.0f};
  EXPECT_EQ(allReduce(data.data(), data.data(), 2), ncclSuccess) << ncclGetLastError(comm_);
}

TEST(NotImplementedNullComm, EveryEntryPointFailsWithoutCrashing) {
  Scratch scratch;
  for (const Unimplemented& entry : unimplementedEntryPoints(scratch)) {
    SCOPED_TRACE(entry.name);
    EXPECT_TRUE(failsWith([&] { return entry.call(nullptr); }, std::nullopt));
  }
}

}  // namespace
