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
  float* s = x.send.data();
  float* r = x.recv.data();
  const size_t n = 8;
  const size_t bytes = n * sizeof(float);
  const ncclDataType_t f = ncclFloat32;
  const ncclRedOp_t sum = ncclSum;
  const ncclScalarResidence_t host = ncclScalarHostImmediate;
  const auto userOp = static_cast<ncclRedOp_t>(ncclNumOps);
  Scratch* p = &x;
  // clang-format off
  return {
      {"ncclReduce", [=](ncclComm_t c) { return ncclReduce(s, r, n, f, sum, 0, c, nullptr); }},
      {"ncclBcast", [=](ncclComm_t c) { return ncclBcast(r, n, f, 0, c, nullptr); }},
      {"ncclBroadcast", [=](ncclComm_t c) { return ncclBroadcast(s, r, n, f, 0, c, nullptr); }},
      {"ncclReduceScatter",
       [=](ncclComm_t c) { return ncclReduceScatter(s, r, n, f, sum, c, nullptr); }},
      {"ncclAllGather", [=](ncclComm_t c) { return ncclAllGather(s, r, n, f, c, nullptr); }},
      {"ncclCommSplit", [=](ncclComm_t c) { return ncclCommSplit(c, 0, 0, &p->newComm, nullptr); }},
      {"ncclCommShrink", [=](ncclComm_t c) {
         return ncclCommShrink(c, nullptr, 0, &p->newComm, nullptr, NCCL_SHRINK_DEFAULT); }},
      {"ncclCommRevoke", [](ncclComm_t c) { return ncclCommRevoke(c, NCCL_REVOKE_DEFAULT); }},
      {"ncclCommInitRankScalable", [=](ncclComm_t) {
         return ncclCommInitRankScalable(&p->newComm, 1, 0, 1, &p->id, nullptr); }},
      {"ncclCommRegister", [=](ncclComm_t c) { return ncclCommRegister(c, r, bytes, &p->ptr); }},
      {"ncclCommDeregister", [](ncclComm_t c) { return ncclCommDeregister(c, nullptr); }},
      {"ncclCommWindowRegister", [=](ncclComm_t c) {
         return ncclCommWindowRegister(c, r, bytes, &p->window, NCCL_WIN_DEFAULT); }},
      {"ncclCommWindowDeregister",
       [](ncclComm_t c) { return ncclCommWindowDeregister(c, nullptr); }},
      {"ncclMemAlloc", [=](ncclComm_t) { return ncclMemAlloc(&p->ptr, 4096); }},
      {"ncclMemFree", [=](ncclComm_t) { return ncclMemFree(r); }},
      {"ncclRedOpCreatePreMulSum", [=](ncclComm_t c) {
         return ncclRedOpCreatePreMulSum(&p->op, &p->scalar, f, host, c); }},
      {"ncclRedOpDestroy", [=](ncclComm_t c) { return ncclRedOpDestroy(userOp, c); }},
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

TEST_F(NotImplementedOneRank, ReductionsWithoutAHostLoopSaySo) {
  // ncclAvg and the 16-bit and 8-bit float types are valid NCCL arguments that the host path
  // cannot reduce yet: the answer must be "not implemented", not "invalid argument".
  std::vector<float> buf(4, 1.0f);  // the values do not matter, only the type and op
  EXPECT_TRUE(failsWith([&] { return allReduce(buf.data(), buf.data(), 4, ncclFloat32, ncclAvg); },
                        ncclInvalidUsage, {"not implemented"}, comm_));
  for (ncclDataType_t type : {ncclFloat16, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2}) {
    SCOPED_TRACE("datatype " + std::to_string(type));
    EXPECT_TRUE(failsWith([&] { return allReduce(buf.data(), buf.data(), 4, type); },
                          ncclInvalidUsage, {"not implemented"}, comm_));
  }
}

}  // namespace
