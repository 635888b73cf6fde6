// ncclCommRegister / ncclCommDeregister on a host communicator, and ncclMemAlloc / ncclMemFree
// where there is no GPU: registrations are tracked (no zero-copy path uses them yet, and INFO
// says so), misuse gets a clear error, and device memory without a device is refused by name.
// The same calls on a GPU communicator are in tests/gpu_api/gpu_api_test.cc.
#include <gtest/gtest.h>

#include <cstring>

#include <vector>

#include "api/api_test_util.h"
#include "braid_ext.h"
#include "nccl.h"

namespace {

using braid::testing::failsWith;
using braid::testing::OneRankTest;

using Registration = OneRankTest;

TEST_F(Registration, RegisterThenDeregister) {
  std::vector<float> buffer(256, 1.0f);
  void* handle = nullptr;
  ASSERT_EQ(ncclCommRegister(comm_, buffer.data(), buffer.size() * sizeof(float), &handle),
            ncclSuccess)
      << ncclGetLastError(comm_);
  ASSERT_NE(handle, nullptr);
  // A registered buffer works in collectives as any other.
  EXPECT_EQ(allReduce(buffer.data(), buffer.data(), buffer.size()), ncclSuccess);
  EXPECT_EQ(ncclCommDeregister(comm_, handle), ncclSuccess) << ncclGetLastError(comm_);
}

TEST_F(Registration, MisuseIsRefusedByName) {
  std::vector<float> buffer(16);
  void* handle = nullptr;
  EXPECT_TRUE(failsWith([&] { return ncclCommRegister(comm_, nullptr, 64, &handle); },
                        ncclInvalidArgument, {"buffer is NULL"}, comm_));
  EXPECT_TRUE(failsWith([&] { return ncclCommRegister(comm_, buffer.data(), 0, &handle); },
                        ncclInvalidArgument, {"size is 0"}, comm_));
  EXPECT_TRUE(failsWith([&] { return ncclCommRegister(comm_, buffer.data(), 64, nullptr); },
                        ncclInvalidArgument, {"handle is NULL"}, comm_));
  ASSERT_EQ(ncclCommRegister(comm_, buffer.data(), 64, &handle), ncclSuccess);
  void* again = nullptr;
  EXPECT_TRUE(failsWith([&] { return ncclCommRegister(comm_, buffer.data(), 64, &again); },
                        ncclInvalidUsage, {"registered", "already"}, comm_));
  ASSERT_EQ(ncclCommDeregister(comm_, handle), ncclSuccess);
  EXPECT_TRUE(failsWith([&] { return ncclCommDeregister(comm_, handle); }, ncclInvalidArgument,
                        {"not a live registration"}, comm_));
  EXPECT_TRUE(failsWith([&] { return ncclCommRegister(nullptr, buffer.data(), 64, &handle); },
                        ncclInvalidArgument, {"comm is NULL"}));
}

// Without a GPU, ncclMemAlloc gives host memory (shared memory the ranks of the host map, which
// the zero-copy all_reduce reads in place: tests/unit/zero_copy_test.cc); ncclMemFree takes it
// back, and bad arguments get clear errors.
TEST(MemAllocWithoutGpu, GivesHostMemoryAndTakesItBack) {
  if (braidGetDeviceApi()->deviceCount() > 0) GTEST_SKIP() << "this machine has a GPU";
  void* p = nullptr;
  ASSERT_EQ(ncclMemAlloc(&p, 1 << 20), ncclSuccess) << ncclGetLastError(nullptr);
  ASSERT_NE(p, nullptr);
  auto* bytes = static_cast<unsigned char*>(p);
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[(1 << 20) - 1], 0);
  memset(p, 0x5a, 1 << 20);
  EXPECT_EQ(bytes[12345], 0x5a);
  EXPECT_EQ(ncclMemFree(p), ncclSuccess);
  EXPECT_EQ(ncclMemFree(nullptr), ncclSuccess);
  void* none = reinterpret_cast<void*>(1);
  EXPECT_TRUE(failsWith([&] { return ncclMemAlloc(&none, 0); }, ncclInvalidArgument,
                        {"ncclMemAlloc", "0 bytes"}));
  EXPECT_TRUE(
      failsWith([] { return ncclMemAlloc(nullptr, 4096); }, ncclInvalidArgument, {"ptr is NULL"}));
}

}  // namespace
