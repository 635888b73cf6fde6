// Every call leaves the caller's current device as it found it, as NCCL's do: a program that
// drives a communicator on one GPU while its thread's current device is another (a framework
// that switches devices, several communicators per thread) must not find its device switched
// under it by a collective, a point-to-point call, a group, a suspend or a destroy.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_api/gpu_cases.h"
#include "support/multiprocess.h"

namespace gpu_current_device_test {

using braid::testing::gpu::deviceApi;

int currentDevice() {
  int device = -1;
  EXPECT_EQ(deviceApi()->getDevice(&device), ncclSuccess);
  return device;
}

class GpuCurrentDevice : public ::testing::Test {
 protected:
  void SetUp() override { BRAID_REQUIRE_GPUS(2); }
};

TEST_F(GpuCurrentDevice, EveryCallLeavesTheCallersDevice) {
  const int n = 2;
  std::vector<ncclComm_t> comms(n, nullptr);
  const int devices[] = {0, 1};
  // ncclCommInitAll sets each rank's device as it makes it, and the caller's back.
  ASSERT_EQ(deviceApi()->setDevice(1), ncclSuccess);
  ASSERT_EQ(ncclCommInitAll(comms.data(), n, devices), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(currentDevice(), 1) << "after ncclCommInitAll";
  const size_t count = 4099;
  braid::testing::runThreads(n, [&](int rank) {
    // Each rank's thread works with the other rank's device current.
    const int other = devices[1 - rank];
    ASSERT_EQ(deviceApi()->setDevice(devices[rank]), ncclSuccess);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(deviceApi()->streamCreate(&stream), ncclSuccess);
    void* buffer = nullptr;
    ASSERT_EQ(deviceApi()->alloc(&buffer, count * sizeof(float)), ncclSuccess);
    // The receive of the group below lands apart from the send's buffer: a send and a receive
    // of one group run at once, and sharing a buffer would race (ThreadSanitizer saw it).
    void* received = nullptr;
    ASSERT_EQ(deviceApi()->alloc(&received, count * sizeof(float)), ncclSuccess);
    std::vector<float> host(count, static_cast<float>(rank + 1));
    ASSERT_EQ(deviceApi()->copy(buffer, host.data(), count * sizeof(float), stream), ncclSuccess);
    ASSERT_EQ(deviceApi()->streamSynchronize(stream), ncclSuccess);

    ASSERT_EQ(deviceApi()->setDevice(other), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(buffer, buffer, count, ncclFloat32, ncclSum, comms[rank], stream),
              ncclSuccess)
        << ncclGetLastError(comms[rank]);
    EXPECT_EQ(currentDevice(), other) << "after ncclAllReduce";
    EXPECT_EQ(ncclBroadcast(buffer, buffer, count, ncclFloat32, 0, comms[rank], stream),
              ncclSuccess);
    EXPECT_EQ(currentDevice(), other) << "after ncclBroadcast";
    // A group of one communicator runs on this thread at its end.
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclSend(buffer, count, ncclFloat32, 1 - rank, comms[rank], stream), ncclSuccess);
    EXPECT_EQ(ncclRecv(received, count, ncclFloat32, 1 - rank, comms[rank], stream), ncclSuccess);
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comms[rank]);
    EXPECT_EQ(currentDevice(), other) << "after a group of a send and a receive";

    ASSERT_EQ(deviceApi()->setDevice(devices[rank]), ncclSuccess);
    ASSERT_EQ(deviceApi()->streamSynchronize(stream), ncclSuccess);
    ASSERT_EQ(deviceApi()->copy(host.data(), received, count * sizeof(float), stream), ncclSuccess);
    ASSERT_EQ(deviceApi()->streamSynchronize(stream), ncclSuccess);
    // all_reduce of 1 and 2 is 3 on both, broadcast keeps it, the exchange swaps equal values.
    EXPECT_EQ(host[0], 3.0f);
    EXPECT_EQ(host[count - 1], 3.0f);

    ASSERT_EQ(deviceApi()->setDevice(other), ncclSuccess);
    EXPECT_EQ(ncclCommSuspend(comms[rank], NCCL_SUSPEND_MEM), ncclSuccess)
        << ncclGetLastError(comms[rank]);
    EXPECT_EQ(currentDevice(), other) << "after ncclCommSuspend";
    EXPECT_EQ(ncclCommResume(comms[rank]), ncclSuccess) << ncclGetLastError(comms[rank]);
    EXPECT_EQ(currentDevice(), other) << "after ncclCommResume";
    EXPECT_EQ(ncclCommFinalize(comms[rank]), ncclSuccess);
    EXPECT_EQ(currentDevice(), other) << "after ncclCommFinalize";
    EXPECT_EQ(ncclCommDestroy(comms[rank]), ncclSuccess);
    EXPECT_EQ(currentDevice(), other) << "after ncclCommDestroy";

    ASSERT_EQ(deviceApi()->setDevice(devices[rank]), ncclSuccess);
    deviceApi()->release(buffer);
    deviceApi()->release(received);
    deviceApi()->streamDestroy(stream);
  });
}

}  // namespace gpu_current_device_test
