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
  // clang-format off
  return {
      {"ncclCommWindowRegister", [=](ncclComm_t c) {
         return ncclCommWindowRegister(c, r, bytes, &p->window, NCCL_WIN_DEFAULT); }},
      {"ncclCommWindowDeregister",
       [](ncclComm_t c) { return ncclCommWindowDeregister(c, nullptr); }},
  };
  // clang-format on
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
