// GPU communicators through the C API, beyond the matrix: stream semantics (a call returns once
// enqueued, before its data moves, and is ordered with the stream's other work), groups over
// several communicators of one thread, ncclCommAbort of a kernel waiting for a peer that never
// comes, asynchronous errors (a kernel's timeout names the peer), non-blocking creation,
// ncclCommInitAll's device list, ncclCommCuDevice, ncclMemAlloc, registration, the refusal
// of host buffers, finalize and destroy in a group, and splitting. Built for the emulated GPU
// (label emulated-gpu) and for a real one (gpu).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <optional>

#include "api/api_test_util.h"
#include "gpu_api/gpu_cases.h"
#include "support/asleep.h"

namespace {

using braid::testing::failsWith;
using braid::testing::runGuarded;
using braid::testing::ScopedEnv;
using braid::testing::gpu::deviceApi;
using braid::testing::gpu::devicesFor;
using braid::testing::gpu::GpuRanks;

/// A float buffer of `count` in device memory of the current device.
struct DeviceFloats {
  explicit DeviceFloats(size_t count) : count(count) {
    EXPECT_EQ(deviceApi()->alloc(&ptr, count * sizeof(float)), ncclSuccess)
        << ncclGetLastError(nullptr);
  }
  ~DeviceFloats() { deviceApi()->release(ptr); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;

  void write(const std::vector<float>& values, cudaStream_t stream) {
    ASSERT_EQ(deviceApi()->copy(ptr, values.data(), count * sizeof(float), stream), ncclSuccess);
  }
  /// Reads the buffer on `stream` and waits for it.
  std::vector<float> read(cudaStream_t stream) {
    std::vector<float> out(count);
    EXPECT_EQ(deviceApi()->copy(out.data(), ptr, count * sizeof(float), stream), ncclSuccess);
    EXPECT_EQ(deviceApi()->streamSynchronize(stream), ncclSuccess);
    return out;
  }
  void* ptr = nullptr;
  size_t count;
};

/// All-reduce of `count` floats on every rank of `g` in one group: rank r's input is r + 1.
struct AllReduceBuffers {
  AllReduceBuffers(const GpuRanks& g, size_t count) {
    for (int r = 0; r < g.size(); ++r) {
      deviceApi()->setDevice(g.device(r));
      send.push_back(std::make_unique<DeviceFloats>(count));
      recv.push_back(std::make_unique<DeviceFloats>(count));
      send[r]->write(std::vector<float>(count, static_cast<float>(r + 1)), g.stream(r));
      recv[r]->write(std::vector<float>(count, -1.0f), g.stream(r));
      EXPECT_EQ(deviceApi()->streamSynchronize(g.stream(r)), ncclSuccess);
    }
  }
  ncclResult_t issue(const GpuRanks& g) {
    ncclGroupStart();
    for (int r = 0; r < g.size(); ++r) {
      ncclAllReduce(send[r]->ptr, recv[r]->ptr, send[r]->count, ncclFloat32, ncclSum, g.comm(r),
                    g.stream(r));
    }
    return ncclGroupEnd();
  }
  std::vector<std::unique_ptr<DeviceFloats>> send, recv;
};

/// Polls a communicator's asynchronous error until it is not ncclSuccess (or kHangGuard passes).
std::optional<ncclResult_t> awaitAsyncError(ncclComm_t comm) {
  return runGuarded<ncclResult_t>([comm] {
    ncclResult_t async = ncclSuccess;
    while (ncclCommGetAsyncError(comm, &async) == ncclSuccess && async == ncclSuccess) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return async;
  });
}

class GpuApi : public ::testing::Test {
 protected:
  void SetUp() override { BRAID_REQUIRE_GPU(); }
};

// The stream is held behind an event of a second stream whose host callback waits for the test:
// the call must return, the output must not have changed, and once released the stream must
// bring the result.
TEST_F(GpuApi, CallReturnsBeforeItsDataMoves) {
  GpuRanks g(devicesFor(2));
  ASSERT_TRUE(g.ok());
  AllReduceBuffers b(g, 4096);
  std::atomic<bool> open{false};
  std::vector<cudaStream_t> gates(2);
  std::vector<void*> events(2);
  for (int r = 0; r < 2; ++r) {
    deviceApi()->setDevice(g.device(r));
    ASSERT_EQ(deviceApi()->streamCreate(&gates[r]), ncclSuccess);
    ASSERT_EQ(deviceApi()->eventCreate(&events[r]), ncclSuccess);
    auto wait = [](void* flag) {
      while (!static_cast<std::atomic<bool>*>(flag)->load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    };
    ASSERT_EQ(deviceApi()->hostCallback(gates[r], wait, &open), ncclSuccess);
    ASSERT_EQ(deviceApi()->eventRecord(events[r], gates[r]), ncclSuccess);
    ASSERT_EQ(deviceApi()->streamWaitEvent(g.stream(r), events[r]), ncclSuccess);
  }
  ASSERT_EQ(b.issue(g), ncclSuccess) << ncclGetLastError(nullptr);
  // Returned with the streams held: nothing has moved.
  for (int r = 0; r < 2; ++r) {
    cudaStream_t side = nullptr;
    deviceApi()->setDevice(g.device(r));
    ASSERT_EQ(deviceApi()->streamCreate(&side), ncclSuccess);
    EXPECT_EQ(b.recv[r]->read(side), std::vector<float>(4096, -1.0f)) << "rank " << r;
    deviceApi()->streamDestroy(side);
  }
  open.store(true);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(b.recv[r]->read(g.stream(r)), std::vector<float>(4096, 3.0f)) << "rank " << r;
    deviceApi()->eventDestroy(events[r]);
    deviceApi()->streamDestroy(gates[r]);
  }
}

// A copy in, the collective and a copy out on one stream, one synchronization at the end: the
// stream orders them.
TEST_F(GpuApi, OrderedWithTheStreamsOtherWork) {
  GpuRanks g(devicesFor(3));
  ASSERT_TRUE(g.ok());
  const size_t count = 100003;
  std::vector<std::unique_ptr<DeviceFloats>> buffers;
  std::vector<std::vector<float>> inputs(3), outputs(3, std::vector<float>(count));
  for (int round = 0; round < 3; ++round) {
    for (int r = 0; r < 3; ++r) {
      deviceApi()->setDevice(g.device(r));
      if (round == 0) buffers.push_back(std::make_unique<DeviceFloats>(count));
      inputs[r].assign(count, static_cast<float>(10 * round + r));
      buffers[r]->write(inputs[r], g.stream(r));
    }
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < 3; ++r) {
      ncclAllReduce(buffers[r]->ptr, buffers[r]->ptr, count, ncclFloat32, ncclSum, g.comm(r),
                    g.stream(r));
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
    for (int r = 0; r < 3; ++r) {
      ASSERT_EQ(
          deviceApi()->copy(outputs[r].data(), buffers[r]->ptr, count * sizeof(float), g.stream(r)),
          ncclSuccess);
    }
    for (int r = 0; r < 3; ++r) {
      ASSERT_EQ(deviceApi()->streamSynchronize(g.stream(r)), ncclSuccess);
      EXPECT_EQ(outputs[r], std::vector<float>(count, static_cast<float>(30 * round + 3)))
          << "round " << round << " rank " << r;
    }
  }
}

// A communicator's first call ever, made while the user's stream is captured into a CUDA graph in
// global mode (PyTorch's default): its set-up (FIFOs, the device program) allocates and waits on
// the communicator's private stream, which global mode forbids unless braid relaxes its thread,
// as NCCL does; the launch itself is captured, runs only when the graph does, and as often.
TEST_F(GpuApi, AFirstCallCapturedInGlobalModeRunsWhenItsGraphDoes) {
  GpuRanks g(devicesFor(2));
  ASSERT_TRUE(g.ok());
  const size_t count = 100003;  // past the one-shot's size: a schedule, FIFOs and a program
  std::vector<std::unique_ptr<DeviceFloats>> buffers;
  for (int r = 0; r < 2; ++r) {
    deviceApi()->setDevice(g.device(r));
    buffers.push_back(std::make_unique<DeviceFloats>(count));
    buffers[r]->write(std::vector<float>(count, 1.0f + r), g.stream(r));
    ASSERT_EQ(deviceApi()->streamSynchronize(g.stream(r)), ncclSuccess);
  }
  std::vector<void*> graphs(2, nullptr);
  std::vector<ncclResult_t> called(2, ncclInternalError);
  std::vector<std::string> errors(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      deviceApi()->setDevice(g.device(r));
      constexpr int kGlobal = 0;
      if (deviceApi()->streamBeginCapture(g.stream(r), kGlobal) != ncclSuccess) {
        errors[r] = ncclGetLastError(nullptr);
        return;
      }
      called[r] = ncclAllReduce(buffers[r]->ptr, buffers[r]->ptr, count, ncclFloat32, ncclSum,
                                g.comm(r), g.stream(r));
      if (called[r] != ncclSuccess) errors[r] = ncclGetLastError(g.comm(r));
      if (deviceApi()->streamEndCapture(g.stream(r), &graphs[r]) != ncclSuccess) {
        errors[r] += std::string(" / end of capture: ") + ncclGetLastError(nullptr);
        graphs[r] = nullptr;
      }
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(called[r], ncclSuccess) << "rank " << r << ": " << errors[r];
    ASSERT_NE(graphs[r], nullptr) << "rank " << r << ": " << errors[r];
    // Captured, not run.
    EXPECT_EQ(buffers[r]->read(g.stream(r)), std::vector<float>(count, 1.0f + r));
  }
  for (float want : {3.0f, 6.0f}) {
    for (int r = 0; r < 2; ++r) {
      deviceApi()->setDevice(g.device(r));
      ASSERT_EQ(deviceApi()->graphLaunch(graphs[r], g.stream(r)), ncclSuccess)
          << ncclGetLastError(nullptr);
    }
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(buffers[r]->read(g.stream(r)), std::vector<float>(count, want)) << "rank " << r;
    }
  }
  for (void* graph : graphs) EXPECT_EQ(deviceApi()->graphDestroy(graph), ncclSuccess);
}

// Four communicators driven by one thread: several calls of each in one group, on one stream per
// communicator, as a data-parallel job with four GPUs per process issues them.
TEST_F(GpuApi, GroupOfSeveralCallsOnSeveralCommunicators) {
  GpuRanks g(devicesFor(4));
  ASSERT_TRUE(g.ok());
  const size_t count = 5000;
  std::vector<std::unique_ptr<DeviceFloats>> a, b, c;
  for (int r = 0; r < 4; ++r) {
    deviceApi()->setDevice(g.device(r));
    a.push_back(std::make_unique<DeviceFloats>(count));
    b.push_back(std::make_unique<DeviceFloats>(count));
    c.push_back(std::make_unique<DeviceFloats>(count * 4));
    a[r]->write(std::vector<float>(count, 1.0f + r), g.stream(r));
    b[r]->write(std::vector<float>(count, 2.0f * r), g.stream(r));
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 4; ++r) {
    ncclAllReduce(a[r]->ptr, a[r]->ptr, count, ncclFloat32, ncclSum, g.comm(r), g.stream(r));
    ncclAllReduce(b[r]->ptr, b[r]->ptr, count, ncclFloat32, ncclMax, g.comm(r), g.stream(r));
    ncclAllGather(b[r]->ptr, c[r]->ptr, count, ncclFloat32, g.comm(r), g.stream(r));
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(a[r]->read(g.stream(r)), std::vector<float>(count, 10.0f));
    EXPECT_EQ(b[r]->read(g.stream(r)), std::vector<float>(count, 6.0f));
    EXPECT_EQ(c[r]->read(g.stream(r)), std::vector<float>(count * 4, 6.0f));
  }
}

/// Connects both ranks with one all-reduce of theirs, then has rank 0 call alone: its kernel
/// waits for rank 1, which never comes.
void startLoneCall(GpuRanks& g, AllReduceBuffers& b) {
  ASSERT_EQ(b.issue(g), ncclSuccess) << ncclGetLastError(nullptr);
  for (int r = 0; r < 2; ++r) ASSERT_EQ(b.recv[r]->read(g.stream(r))[0], 3.0f);
  deviceApi()->setDevice(g.device(0));
  ASSERT_EQ(ncclAllReduce(b.send[0]->ptr, b.recv[0]->ptr, 1024, ncclFloat32, ncclSum, g.comm(0),
                          g.stream(0)),
            ncclSuccess)
      << ncclGetLastError(nullptr);
}

// After the communicators are connected, rank 0 calls alone: its kernel waits for rank 1, which
// never comes. ncclCommAbort must end that kernel (and return), and the stream must drain.
TEST_F(GpuApi, AbortEndsAKernelWaitingForAPeer) {
  auto g = std::make_unique<GpuRanks>(devicesFor(2));
  ASSERT_TRUE(g->ok());
  // What a failed assertion leaves behind is destroyed with g.
  AllReduceBuffers b(*g, 1024);
  ASSERT_NO_FATAL_FAILURE(startLoneCall(*g, b));
  ncclComm_t waiting = g->comm(0);
  const auto aborted = runGuarded<ncclResult_t>([&] { return ncclCommAbort(waiting); });
  ASSERT_TRUE(aborted.has_value()) << "ncclCommAbort did not return: the kernel kept waiting";
  g->forget(0);
  EXPECT_EQ(*aborted, ncclSuccess);
  const auto drained =
      runGuarded<ncclResult_t>([&] { return deviceApi()->streamSynchronize(g->stream(0)); });
  ASSERT_TRUE(drained.has_value()) << "the aborted kernel never ended";
  // The other rank is intact; its communicator is destroyed normally, with g.
}

// As above, but the abort comes from another thread while this one waits in the stream for
// rank 0's kernel, as a training loop's watchdog aborts a rank stuck in cudaStreamSynchronize:
// the abort returns, the kernel ends, and so does the wait.
TEST_F(GpuApi, AbortFromAnotherThreadEndsAStreamWait) {
  auto g = std::make_unique<GpuRanks>(devicesFor(2));
  ASSERT_TRUE(g->ok());
  AllReduceBuffers b(*g, 1024);
  ASSERT_NO_FATAL_FAILURE(startLoneCall(*g, b));
  const cudaStream_t stream = g->stream(0);
  const int device = g->device(0);
  // Shared with the waiter, which outlives the test if the wait never ends.
  auto waited = std::make_shared<std::atomic<int>>(-1);
  auto waiterTid = std::make_shared<std::atomic<pid_t>>(0);
  std::thread([=] {
    waiterTid->store(braid::testing::threadId());
    deviceApi()->setDevice(device);
    waited->store(static_cast<int>(deviceApi()->streamSynchronize(stream)));
  }).detach();
  while (waiterTid->load() == 0) std::this_thread::yield();
  // A real GPU's synchronize may spin rather than sleep: after 3 s of looking it is taken as
  // waiting, as its kernel cannot end before rank 1 calls.
  (void)braid::testing::waitUntilAsleep(getpid(), waiterTid->load(), std::chrono::seconds(3));
  EXPECT_EQ(waited->load(), -1) << "the stream finished a kernel whose peer never called";
  ncclComm_t waiting = g->comm(0);
  const auto aborted = runGuarded<ncclResult_t>([&] { return ncclCommAbort(waiting); });
  ASSERT_TRUE(aborted.has_value()) << "ncclCommAbort did not return: the kernel kept waiting";
  g->forget(0);
  EXPECT_EQ(*aborted, ncclSuccess);
  const auto by = std::chrono::steady_clock::now() + braid::testing::kHangGuard;
  while (waited->load() == -1 && std::chrono::steady_clock::now() < by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_NE(waited->load(), -1) << "the stream wait never ended after the abort";
}

// With a short BRAID_TIMEOUT_MS a kernel waiting for a peer gives up by itself:
// ncclCommGetAsyncError turns to ncclRemoteError, and the next call says whom it waited for.
// The timeout covers the first call too (both ranks, connecting lazily), so it is 2 s rather than
// a few hundred ms that a loaded two-core machine under ASan could spend on that setup.
TEST_F(GpuApi, KernelTimeoutIsAnAsyncErrorNamingThePeer) {
  ScopedEnv timeout("BRAID_TIMEOUT_MS", "2000");
  GpuRanks g(devicesFor(2));
  ASSERT_TRUE(g.ok());
  AllReduceBuffers b(g, 1024);
  ASSERT_EQ(b.issue(g), ncclSuccess) << ncclGetLastError(nullptr);
  for (int r = 0; r < 2; ++r) b.recv[r]->read(g.stream(r));
  deviceApi()->setDevice(g.device(0));
  ASSERT_EQ(ncclAllReduce(b.send[0]->ptr, b.recv[0]->ptr, 1024, ncclFloat32, ncclSum, g.comm(0),
                          g.stream(0)),
            ncclSuccess);
  const auto seen = awaitAsyncError(g.comm(0));
  ASSERT_TRUE(seen.has_value()) << "the kernel never gave up";
  EXPECT_EQ(*seen, ncclRemoteError);
  EXPECT_TRUE(failsWith(
      [&] {
        return ncclAllReduce(b.send[0]->ptr, b.recv[0]->ptr, 1024, ncclFloat32, ncclSum, g.comm(0),
                             g.stream(0));
      },
      ncclRemoteError, {"timed out", "rank 1"}, g.comm(0)));
  EXPECT_EQ(deviceApi()->streamSynchronize(g.stream(0)), ncclSuccess);
  // Rank 1 never called; its communicator is fine.
  ncclResult_t other = ncclInternalError;
  EXPECT_EQ(ncclCommGetAsyncError(g.comm(1), &other), ncclSuccess);
  EXPECT_EQ(other, ncclSuccess);
}

// Ranks that disagree on the count: the kernel sees a slice of another size, stops, and the
// communicator reports it with both sizes instead of reading the wrong bytes.
TEST_F(GpuApi, MismatchedCountsAreAnAsyncErrorWithTheSizes) {
  GpuRanks g(devicesFor(2));
  ASSERT_TRUE(g.ok());
  AllReduceBuffers b(g, 2048);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ncclAllReduce(b.send[0]->ptr, b.recv[0]->ptr, 1000, ncclFloat32, ncclSum, g.comm(0), g.stream(0));
  ncclAllReduce(b.send[1]->ptr, b.recv[1]->ptr, 2000, ncclFloat32, ncclSum, g.comm(1), g.stream(1));
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  bool mismatchSeen = false;
  for (int r = 0; r < 2; ++r) {
    const auto async = awaitAsyncError(g.comm(r));
    ASSERT_TRUE(async.has_value()) << "rank " << r << " never saw the mismatch";
    EXPECT_NE(*async, ncclSuccess);
    if (*async == ncclInvalidUsage) {
      mismatchSeen = true;
      EXPECT_TRUE(failsWith(
          [&] {
            return ncclAllReduce(b.send[r]->ptr, b.recv[r]->ptr, 1, ncclFloat32, ncclSum, g.comm(r),
                                 g.stream(r));
          },
          ncclInvalidUsage, {"received a slice of", "expected", "same count"}, g.comm(r)));
    }
  }
  EXPECT_TRUE(mismatchSeen) << "no rank reported the slice mismatch itself";
  for (int r = 0; r < 2; ++r) EXPECT_EQ(deviceApi()->streamSynchronize(g.stream(r)), ncclSuccess);
}

// A receive shorter than its send is caught by the last-slice mark.
TEST_F(GpuApi, SendRecvSizeMismatchIsReported) {
  GpuRanks g(devicesFor(2));
  ASSERT_TRUE(g.ok());
  AllReduceBuffers b(g, 256);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ncclSend(b.send[0]->ptr, 100, ncclFloat32, 1, g.comm(0), g.stream(0));
  ncclRecv(b.recv[1]->ptr, 50, ncclFloat32, 0, g.comm(1), g.stream(1));
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  const auto async = awaitAsyncError(g.comm(1));
  ASSERT_TRUE(async.has_value());
  EXPECT_EQ(*async, ncclInvalidUsage);
  EXPECT_TRUE(
      failsWith([&] { return ncclRecv(b.recv[1]->ptr, 1, ncclFloat32, 0, g.comm(1), g.stream(1)); },
                ncclInvalidUsage, {"400 bytes", "expected 200"}, g.comm(1)));
  for (int r = 0; r < 2; ++r) EXPECT_EQ(deviceApi()->streamSynchronize(g.stream(r)), ncclSuccess);
}

TEST_F(GpuApi, NonBlockingCreationIsInProgressThenUsable) {
  const int n = 2;
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(n, nullptr);
  std::vector<ncclResult_t> started(n);
  std::vector<int> devices = devicesFor(n);
  // One thread makes both: neither call may block waiting for the other.
  for (int r = 0; r < n; ++r) {
    deviceApi()->setDevice(devices[r]);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    started[r] = ncclCommInitRankConfig(&comms[r], n, id, r, &config);
    ASSERT_TRUE(started[r] == ncclInProgress || started[r] == ncclSuccess)
        << ncclGetLastError(nullptr);
    ASSERT_NE(comms[r], nullptr);
  }
  for (int r = 0; r < n; ++r) {
    const auto state = runGuarded<ncclResult_t>([&] {
      ncclResult_t async = ncclInProgress;
      while (ncclCommGetAsyncError(comms[r], &async) == ncclSuccess && async == ncclInProgress) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      return async;
    });
    ASSERT_TRUE(state.has_value());
    EXPECT_EQ(*state, ncclSuccess) << ncclGetLastError(comms[r]);
    int device = -1;
    EXPECT_EQ(ncclCommCuDevice(comms[r], &device), ncclSuccess);
    EXPECT_EQ(device, devices[r]);
  }
  for (int r = 0; r < n; ++r) EXPECT_EQ(ncclCommDestroy(comms[r]), ncclSuccess);
}

TEST_F(GpuApi, InitAllTakesTheDeviceList) {
  const int ndev = deviceApi()->deviceCount();
  // Reversed, and every rank twice: several ranks may share a device.
  std::vector<int> devlist;
  for (int d = ndev - 1; d >= 0; --d) devlist.insert(devlist.end(), {d, d});
  std::vector<ncclComm_t> comms(devlist.size(), nullptr);
  ASSERT_EQ(ncclCommInitAll(comms.data(), static_cast<int>(comms.size()), devlist.data()),
            ncclSuccess)
      << ncclGetLastError(nullptr);
  for (size_t r = 0; r < comms.size(); ++r) {
    int device = -1;
    EXPECT_EQ(ncclCommCuDevice(comms[r], &device), ncclSuccess);
    EXPECT_EQ(device, devlist[r]) << "rank " << r;
  }
  for (ncclComm_t c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  std::vector<int> bad = {0, ndev};
  std::vector<ncclComm_t> two(2, nullptr);
  EXPECT_TRUE(failsWith([&] { return ncclCommInitAll(two.data(), 2, bad.data()); }, std::nullopt,
                        {"device"}));
}

// One thread's last all-reduce, finalize and destroy of four GPU ranks in one group: the
// finalizes wait for the kernels and for every rank, the destroys for the finalizes.
TEST_F(GpuApi, OneGroupRunsTheLastCallFinalizesAndDestroys) {
  GpuRanks g(devicesFor(4, 2));
  ASSERT_TRUE(g.ok());
  AllReduceBuffers b(g, 1000);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < g.size(); ++r) {
    ASSERT_EQ(ncclAllReduce(b.send[r]->ptr, b.recv[r]->ptr, 1000, ncclFloat32, ncclSum, g.comm(r),
                            g.stream(r)),
              ncclSuccess);
    ASSERT_EQ(ncclCommFinalize(g.comm(r)), ncclSuccess);
    ASSERT_EQ(ncclCommDestroy(g.comm(r)), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (int r = 0; r < g.size(); ++r) {
    g.forget(r);
    deviceApi()->setDevice(g.device(r));
    EXPECT_EQ(b.recv[r]->read(g.stream(r)), std::vector<float>(1000, 10.0f)) << "rank " << r;
  }
}

// Splitting GPU ranks (two to a device) into evens and odds: each new communicator runs on its
// parent's device and all-reduces device buffers.
TEST_F(GpuApi, SplitCommunicatorsRunOnTheParentsDevices) {
  GpuRanks g(devicesFor(4, 2));
  ASSERT_TRUE(g.ok());
  std::vector<ncclComm_t> halves(4, nullptr);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(ncclCommSplit(g.comm(r), r % 2, r, &halves[r], nullptr), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  std::vector<std::unique_ptr<DeviceFloats>> buffers;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 4; ++r) {
    ASSERT_NE(halves[r], nullptr);
    int device = -1;
    EXPECT_EQ(ncclCommCuDevice(halves[r], &device), ncclSuccess);
    EXPECT_EQ(device, g.device(r));
    deviceApi()->setDevice(g.device(r));
    buffers.push_back(std::make_unique<DeviceFloats>(1000));
    buffers[r]->write(std::vector<float>(1000, static_cast<float>(r + 1)), g.stream(r));
    ASSERT_EQ(ncclAllReduce(buffers[r]->ptr, buffers[r]->ptr, 1000, ncclFloat32, ncclSum, halves[r],
                            g.stream(r)),
              ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (int r = 0; r < 4; ++r) {
    deviceApi()->setDevice(g.device(r));
    // Evens hold 1 + 3, odds 2 + 4.
    EXPECT_EQ(buffers[r]->read(g.stream(r)), std::vector<float>(1000, r % 2 == 0 ? 4.0f : 6.0f));
    EXPECT_EQ(ncclCommDestroy(halves[r]), ncclSuccess);
  }
}

TEST_F(GpuApi, MemAllocServesCollectivesAndRegistrationIsTracked) {
  GpuRanks g(devicesFor(2));
  ASSERT_TRUE(g.ok());
  const size_t count = 777;
  std::vector<void*> buffers(2);
  std::vector<void*> handles(2);
  for (int r = 0; r < 2; ++r) {
    deviceApi()->setDevice(g.device(r));
    ASSERT_EQ(ncclMemAlloc(&buffers[r], count * sizeof(float)), ncclSuccess)
        << ncclGetLastError(nullptr);
    ASSERT_EQ(ncclCommRegister(g.comm(r), buffers[r], count * sizeof(float), &handles[r]),
              ncclSuccess)
        << ncclGetLastError(g.comm(r));
    std::vector<float> v(count, 5.0f * (r + 1));
    ASSERT_EQ(deviceApi()->copy(buffers[r], v.data(), v.size() * sizeof(float), g.stream(r)),
              ncclSuccess);
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; ++r) {
    ncclAllReduce(buffers[r], buffers[r], count, ncclFloat32, ncclSum, g.comm(r), g.stream(r));
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (int r = 0; r < 2; ++r) {
    std::vector<float> out(count);
    deviceApi()->copy(out.data(), buffers[r], count * sizeof(float), g.stream(r));
    deviceApi()->streamSynchronize(g.stream(r));
    EXPECT_EQ(out, std::vector<float>(count, 15.0f));
    EXPECT_EQ(ncclCommDeregister(g.comm(r), handles[r]), ncclSuccess);
    EXPECT_EQ(ncclMemFree(buffers[r]), ncclSuccess);
  }
}

TEST_F(GpuApi, HostBuffersAreRefusedByName) {
  GpuRanks g(devicesFor(1));
  ASSERT_TRUE(g.ok());
  std::vector<float> host(16, 1.0f);
  EXPECT_TRUE(failsWith(
      [&] {
        return ncclAllReduce(host.data(), host.data(), host.size(), ncclFloat32, ncclSum, g.comm(0),
                             g.stream(0));
      },
      ncclInvalidArgument, {"host memory", "BRAID_HOST_COMM"}, g.comm(0)));
  // Refused at the call: the communicator still works.
  DeviceFloats d(16);
  d.write(host, g.stream(0));
  EXPECT_EQ(ncclAllReduce(d.ptr, d.ptr, 16, ncclFloat32, ncclSum, g.comm(0), g.stream(0)),
            ncclSuccess)
      << ncclGetLastError(g.comm(0));
  EXPECT_EQ(d.read(g.stream(0)), host);
}

TEST_F(GpuApi, HostCommKnobGivesHostCommunicatorsOnAGpuMachine) {
  ScopedEnv host("BRAID_HOST_COMM", "1");
  std::vector<ncclComm_t> comms(2, nullptr);
  ASSERT_EQ(ncclCommInitAll(comms.data(), 2, nullptr), ncclSuccess) << ncclGetLastError(nullptr);
  std::vector<std::vector<float>> data = {{1, 2, 3}, {10, 20, 30}};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; ++r) {
    int device = 0;
    EXPECT_EQ(ncclCommCuDevice(comms[r], &device), ncclSuccess);
    EXPECT_EQ(device, -1);
    ncclAllReduce(data[r].data(), data[r].data(), 3, ncclFloat32, ncclSum, comms[r], nullptr);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(data[r], (std::vector<float>{11, 22, 33}));
  for (ncclComm_t c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
}

// braidCommInitRankHost makes one communicator on host memory while a GPU is current and others
// are GPU communicators: the PyTorch backend's communicators for CPU tensors. Its splits stay on
// host memory.
TEST_F(GpuApi, InitRankHostGivesAHostCommunicatorWhileAGpuIsCurrent) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(2, nullptr), halves(2, nullptr);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; ++r) braidCommInitRankHost(&comms[r], 2, id, r, nullptr);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; ++r) ncclCommSplit(comms[r], r, 0, &halves[r], nullptr);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (ncclComm_t c : {comms[0], comms[1], halves[0], halves[1]}) {
    int device = 0;
    EXPECT_EQ(ncclCommCuDevice(c, &device), ncclSuccess);
    EXPECT_EQ(device, -1);
  }
  std::vector<std::vector<float>> data = {{1, 2}, {10, 20}};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; ++r) {
    ncclAllReduce(data[r].data(), data[r].data(), 2, ncclFloat32, ncclSum, comms[r], nullptr);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(data[r], (std::vector<float>{11, 22}));
  for (ncclComm_t c : {halves[0], halves[1], comms[0], comms[1]}) {
    EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  }
}

}  // namespace
