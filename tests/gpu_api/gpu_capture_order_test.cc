// A communicator's captured calls and its eager calls share its FIFOs and cursors, so a replay of
// a captured call and an eager call must never run at once, whatever stream each is on, and they
// must run in the order they were launched; destroying the communicator waits for a replay still
// running. The calls below each multiply or replace the buffer, so any other order, or an
// overlap, ends with another value (or a kernel that times out).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpu_api/gpu_cases.h"

namespace gpu_capture_order_test {

using braid::testing::gpu::deviceApi;
using braid::testing::gpu::devicesFor;
using braid::testing::gpu::GpuRanks;

constexpr size_t kCount = 100003;  // a schedule with FIFOs and a device program

std::vector<float> readBack(void* device, cudaStream_t stream) {
  std::vector<float> out(kCount);
  EXPECT_EQ(deviceApi()->copy(out.data(), device, kCount * sizeof(float), stream), ncclSuccess);
  EXPECT_EQ(deviceApi()->streamSynchronize(stream), ncclSuccess);
  return out;
}

class GpuCaptureOrder : public ::testing::Test {
 protected:
  void SetUp() override { BRAID_REQUIRE_GPU(); }
};

TEST_F(GpuCaptureOrder, ReplaysAndEagerCallsOnAnotherStreamRunInTurn) {
  const int n = 2;
  GpuRanks g(devicesFor(n));
  ASSERT_TRUE(g.ok());
  // Per rank: x (1.0), y (rank + 1), a second stream for the eager calls.
  std::vector<void*> x(n, nullptr), y(n, nullptr);
  std::vector<cudaStream_t> eager(n, nullptr);
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(deviceApi()->setDevice(g.device(r)), ncclSuccess);
    ASSERT_EQ(deviceApi()->alloc(&x[r], kCount * sizeof(float)), ncclSuccess);
    ASSERT_EQ(deviceApi()->alloc(&y[r], kCount * sizeof(float)), ncclSuccess);
    ASSERT_EQ(deviceApi()->streamCreate(&eager[r]), ncclSuccess);
    const std::vector<float> one(kCount, 1.0f), mine(kCount, static_cast<float>(r + 1));
    ASSERT_EQ(deviceApi()->copy(x[r], one.data(), kCount * sizeof(float), g.stream(r)),
              ncclSuccess);
    ASSERT_EQ(deviceApi()->copy(y[r], mine.data(), kCount * sizeof(float), g.stream(r)),
              ncclSuccess);
    ASSERT_EQ(deviceApi()->streamSynchronize(g.stream(r)), ncclSuccess);
  }
  // The captured call: x = sum over ranks of x, in place (doubles it), on each rank's stream.
  std::vector<void*> graphs(n, nullptr);
  std::vector<std::string> errors(n);
  std::vector<std::thread> ranks;
  for (int r = 0; r < n; ++r) {
    ranks.emplace_back([&, r] {
      deviceApi()->setDevice(g.device(r));
      constexpr int kGlobal = 0;
      if (deviceApi()->streamBeginCapture(g.stream(r), kGlobal) != ncclSuccess ||
          ncclAllReduce(x[r], x[r], kCount, ncclFloat32, ncclSum, g.comm(r), g.stream(r)) !=
              ncclSuccess ||
          deviceApi()->streamEndCapture(g.stream(r), &graphs[r]) != ncclSuccess) {
        errors[r] = ncclGetLastError(g.comm(r));
      }
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < n; ++r) ASSERT_NE(graphs[r], nullptr) << "rank " << r << ": " << errors[r];

  auto replay = [&] {
    for (int r = 0; r < n; ++r) {
      ASSERT_EQ(deviceApi()->setDevice(g.device(r)), ncclSuccess);
      ASSERT_EQ(deviceApi()->graphLaunch(graphs[r], g.stream(r)), ncclSuccess);
    }
  };
  // The eager call, on the other stream: x = sum over ranks of y = 3, out of place.
  auto eagerCall = [&] {
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < n; ++r) {
      ASSERT_EQ(ncclAllReduce(y[r], x[r], kCount, ncclFloat32, ncclSum, g.comm(r), eager[r]),
                ncclSuccess);
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  };
  // 1 -> 2 -> 3 -> 6 -> 12 -> 3 -> 6, launched without waiting in between.
  replay();
  eagerCall();
  replay();
  replay();
  eagerCall();
  replay();
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(deviceApi()->setDevice(g.device(r)), ncclSuccess);
    ASSERT_EQ(deviceApi()->streamSynchronize(eager[r]), ncclSuccess);
    EXPECT_EQ(readBack(x[r], g.stream(r)), std::vector<float>(kCount, 6.0f)) << "rank " << r;
  }

  // A replay still running when the communicators go: destroy waits for it (12 in the end).
  replay();
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(ncclCommDestroy(g.comm(r)), ncclSuccess) << ncclGetLastError(nullptr);
    g.forget(r);
  }
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(deviceApi()->setDevice(g.device(r)), ncclSuccess);
    EXPECT_EQ(readBack(x[r], g.stream(r)), std::vector<float>(kCount, 12.0f)) << "rank " << r;
    EXPECT_EQ(deviceApi()->graphDestroy(graphs[r]), ncclSuccess);
    deviceApi()->streamDestroy(eager[r]);
    deviceApi()->release(x[r]);
    deviceApi()->release(y[r]);
  }
}

}  // namespace gpu_capture_order_test
