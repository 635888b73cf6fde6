// How a GPU communicator's calls become kernel launches, seen through a runtime that wraps the
// emulated GPU and records every launch: one launch per call outside a group; within one
// (Comm::beginFusedLaunch / endFusedLaunch, what ncclGroupStart / End do), one launch for the
// calls of one stream and (datatype, operator), one more for each change and for a call on
// memory an earlier call of the launch writes; a batch of sends and receives in one launch, its
// transfers on blocks after the collectives'.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "braid/comm.h"
#include "gpu/runtime.h"
#include "kernels/engine/launch.h"
#include "support/recording_runtime.h"
#include "support/thread_comms.h"

namespace braid {
namespace {

namespace engine = kernels::engine;
using testing::RecordingRuntime;

/// Two ranks as threads of this process on emulated devices 0 and 1, with a stream and two
/// device buffers of `count` floats each.
class GpuLaunches : public ::testing::Test {
 protected:
  static constexpr int kRanks = 2;
  static constexpr size_t kCount = 4096;

  void SetUp() override {
    testing::ThreadComms made = testing::createThreadComms({0, 1});
    comms_ = std::move(made.comms);
    for (int r = 0; r < kRanks; ++r) {
      ASSERT_TRUE(comms_[r]) << "rank " << r << ": " << made.failures[r].message();
      ASSERT_TRUE(comms_[r]->onGpu());
      ASSERT_TRUE(runtime_.setDevice(r).ok());
      streams_.push_back(runtime_.streamCreate().value());
      a_.push_back(runtime_.deviceAlloc(kCount * sizeof(float)).value());
      b_.push_back(runtime_.deviceAlloc(kCount * sizeof(float)).value());
      c_.push_back(runtime_.deviceAlloc(kCount * sizeof(float)).value());
      d_.push_back(runtime_.deviceAlloc(kCount * sizeof(float)).value());
      for (void* buffer : {a_[r], b_[r], c_[r], d_[r]}) {
        ASSERT_TRUE(runtime_.fill(buffer, 0, kCount * sizeof(float), streams_[r]).ok());
      }
    }
  }

  void TearDown() override {
    for (size_t r = 0; r < comms_.size(); ++r) {
      (void)runtime_.setDevice(static_cast<int>(r));
      if (r < streams_.size()) (void)runtime_.streamSynchronize(streams_[r]);
      comms_[r].reset();
      if (r < streams_.size()) (void)runtime_.streamDestroy(streams_[r]);
      if (r < a_.size()) (void)runtime_.deviceFree(a_[r]);
      if (r < b_.size()) (void)runtime_.deviceFree(b_[r]);
      if (r < c_.size()) (void)runtime_.deviceFree(c_[r]);
      if (r < d_.size()) (void)runtime_.deviceFree(d_[r]);
    }
  }

  /// Runs body(r) on a thread per rank, each with its device current, and waits for the streams.
  template <typename Body>
  void onEveryRank(Body body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r) {
      threads.emplace_back([&, r] {
        (void)runtime_.setDevice(r);
        body(r);
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < kRanks; ++r) ASSERT_TRUE(runtime_.streamSynchronize(streams_[r]).ok());
  }

  /// The launches each device saw since the last clear.
  std::vector<std::vector<RecordingRuntime::Record>> byDevice() {
    std::vector<std::vector<RecordingRuntime::Record>> out(kRanks);
    for (const auto& l : runtime_.launches()) out[l.device].push_back(l);
    return out;
  }

  RecordingRuntime runtime_{kRanks};
  gpu::ScopedRuntime installed_{runtime_};
  std::vector<std::unique_ptr<Comm>> comms_;
  std::vector<gpu::Stream> streams_;
  /// The calls fused into one launch run at once, a block each (NCCL does not order the calls
  /// of a group either), so within one launch no buffer is written by one call and touched by
  /// another: ThreadSanitizer saw such a race when a send read the buffer an all-reduce wrote.
  std::vector<void*> a_, b_, c_, d_;
};

TEST_F(GpuLaunches, EachCallOutsideAGroupIsALaunch) {
  onEveryRank([&](int r) {
    for (int i = 0; i < 3; ++i) {
      EXPECT_TRUE(
          comms_[r]
              ->allReduce(a_[r], a_[r], kCount, DataType::kFloat32, RedOp::kSum, streams_[r])
              .ok());
    }
  });
  for (const auto& launches : byDevice()) {
    ASSERT_EQ(launches.size(), 3u);
    for (const auto& l : launches) {
      EXPECT_EQ(l.ncalls, 1u);
      // The parameter's header and one call, not the kMaxLaunchCalls it may hold.
      EXPECT_EQ(l.argBytes, engine::engineArgsBytes(1));
      EXPECT_LT(l.argBytes, sizeof(engine::EngineArgs) / 16);
    }
  }
}

TEST_F(GpuLaunches, CallsOnBuffersAlreadySeenQueryNoPointer) {
  auto allReduce = [&](int r, void* in, void* out) {
    EXPECT_TRUE(
        comms_[r]->allReduce(in, out, kCount, DataType::kFloat32, RedOp::kSum, streams_[r]).ok());
  };
  onEveryRank([&](int r) { allReduce(r, a_[r], b_[r]); });
  runtime_.clear();
  onEveryRank([&](int r) {
    for (int i = 0; i < 3; ++i) allReduce(r, a_[r], b_[r]);
  });
  EXPECT_EQ(runtime_.pointerQueries(), 0) << "the buffers were checked on the first call";
  onEveryRank([&](int r) { allReduce(r, a_[r], c_[r]); });
  EXPECT_EQ(runtime_.pointerQueries(), kRanks) << "one new buffer per rank";
  // Host memory is still refused: only buffers found fine are remembered.
  std::vector<float> host(kCount);
  Status refused = comms_[0]->allReduce(host.data(), host.data(), kCount, DataType::kFloat32,
                                        RedOp::kSum, streams_[0]);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("sendbuff is host memory"), std::string::npos)
      << refused.message();
}

// What is asked of CUDA for each call stays off the latency of small calls: once a call's shape
// is set up (FIFOs, device program) and its buffers checked, a call on the communicator's own
// device asks only whether its stream is being captured, which can change between any two calls.
TEST_F(GpuLaunches, ACallAlreadySeenAsksTheRuntimeOnlyWhetherItsStreamIsCaptured) {
  auto allReduce = [&](int r) {
    EXPECT_TRUE(comms_[r]
                    ->allReduce(a_[r], b_[r], kCount, DataType::kFloat32, RedOp::kSum, streams_[r])
                    .ok());
  };
  onEveryRank([&](int r) { allReduce(r); });
  runtime_.clear();
  constexpr int kCalls = 3;
  onEveryRank([&](int r) {
    for (int i = 0; i < kCalls; ++i) allReduce(r);
  });
  RecordingRuntime::Asked asked = runtime_.asked();
  EXPECT_EQ(asked.pointerQueries, 0);
  EXPECT_EQ(asked.modeExchanges, 0) << "relaxed capture mode only where a first call sets up";
  EXPECT_EQ(asked.setDevices, kRanks) << "onEveryRank's own: the device was current already";
  EXPECT_EQ(asked.captureQueries, kRanks * kCalls);

  // From a thread whose current device is the other rank's: switched for the call, and back.
  runtime_.clear();
  onEveryRank([&](int r) {
    ASSERT_TRUE(runtime_.setDevice(kRanks - 1 - r).ok());
    allReduce(r);
    EXPECT_EQ(runtime_.currentDevice().value(), kRanks - 1 - r);
  });
  asked = runtime_.asked();
  EXPECT_EQ(asked.setDevices, kRanks * 4) << "onEveryRank's, the test's, the call's two";
  EXPECT_EQ(asked.modeExchanges, 0);
}

TEST_F(GpuLaunches, AGroupOfCallsOnOneStreamIsOneLaunch) {
  onEveryRank([&](int r) {
    comms_[r]->beginFusedLaunch();
    EXPECT_TRUE(comms_[r]
                    ->allReduce(a_[r], a_[r], kCount, DataType::kFloat32, RedOp::kSum, streams_[r])
                    .ok());
    EXPECT_TRUE(comms_[r]
                    ->allReduce(b_[r], b_[r], kCount, DataType::kFloat32, RedOp::kSum, streams_[r])
                    .ok());
    // Calls that only move data join any launch.
    EXPECT_TRUE(comms_[r]->broadcast(c_[r], d_[r], kCount, DataType::kInt32, 0, streams_[r]).ok());
    EXPECT_TRUE(comms_[r]->endFusedLaunch().ok());
  });
  for (const auto& launches : byDevice()) {
    ASSERT_EQ(launches.size(), 1u);
    EXPECT_EQ(launches[0].ncalls, 3u);
    EXPECT_EQ(launches[0].argBytes, engine::engineArgsBytes(3));
  }
}

TEST_F(GpuLaunches, AnotherDatatypeOrOperatorStartsAnotherLaunch) {
  onEveryRank([&](int r) {
    comms_[r]->beginFusedLaunch();
    EXPECT_TRUE(comms_[r]
                    ->allReduce(a_[r], a_[r], kCount, DataType::kFloat32, RedOp::kSum, streams_[r])
                    .ok());
    EXPECT_TRUE(comms_[r]
                    ->allReduce(b_[r], b_[r], kCount, DataType::kFloat32, RedOp::kMax, streams_[r])
                    .ok());
    EXPECT_TRUE(comms_[r]
                    ->allReduce(a_[r], a_[r], kCount, DataType::kInt32, RedOp::kMax, streams_[r])
                    .ok());
    EXPECT_TRUE(comms_[r]->endFusedLaunch().ok());
  });
  for (const auto& launches : byDevice()) ASSERT_EQ(launches.size(), 3u);
}

// A launch's blocks order its calls per block only: block 0 of a second call could read what
// block 1 of the first has not written yet. So a call that reads or writes memory an earlier
// call of the launch writes, or writes memory one reads, waits for the next launch.
TEST_F(GpuLaunches, ACallOnMemoryAnEarlierCallTouchesStartsAnotherLaunch) {
  onEveryRank([&](int r) {
    comms_[r]->beginFusedLaunch();
    // Writes a; reads a (read after write): a second launch.
    EXPECT_TRUE(comms_[r]
                    ->allReduce(a_[r], a_[r], kCount, DataType::kFloat32, RedOp::kSum, streams_[r])
                    .ok());
    EXPECT_TRUE(comms_[r]
                    ->allReduce(a_[r], b_[r], kCount, DataType::kFloat32, RedOp::kSum, streams_[r])
                    .ok());
    // Touches neither a nor b: joins the second launch.
    EXPECT_TRUE(comms_[r]
                    ->allReduce(c_[r], c_[r], kCount, DataType::kFloat32, RedOp::kSum, streams_[r])
                    .ok());
    // Writes a, which the second all-reduce reads (write after read): a third launch.
    EXPECT_TRUE(comms_[r]
                    ->allReduce(d_[r], a_[r], kCount, DataType::kFloat32, RedOp::kSum, streams_[r])
                    .ok());
    EXPECT_TRUE(comms_[r]->endFusedLaunch().ok());
  });
  for (const auto& launches : byDevice()) {
    ASSERT_EQ(launches.size(), 3u);
    EXPECT_EQ(launches[0].ncalls, 1u);
    EXPECT_EQ(launches[1].ncalls, 2u);
    EXPECT_EQ(launches[2].ncalls, 1u);
  }
}

TEST_F(GpuLaunches, ABatchOfSendsAndReceivesIsOneLaunchAfterTheCollectivesBlocks) {
  onEveryRank([&](int r) {
    const int peer = 1 - r;
    comms_[r]->beginFusedLaunch();
    EXPECT_TRUE(comms_[r]
                    ->allReduce(a_[r], a_[r], kCount, DataType::kFloat32, RedOp::kSum, streams_[r])
                    .ok());
    std::vector<P2pOp> ops(2);
    ops[0] = {P2pOp::Kind::kSend, peer, c_[r], kCount, DataType::kFloat32};
    ops[1] = {P2pOp::Kind::kRecv, peer, d_[r], kCount, DataType::kFloat32};
    EXPECT_TRUE(comms_[r]->sendRecv(ops, streams_[r]).ok());
    EXPECT_TRUE(comms_[r]->endFusedLaunch().ok());
  });
  for (const auto& launches : byDevice()) {
    ASSERT_EQ(launches.size(), 1u);
    EXPECT_EQ(launches[0].ncalls, 3u);
    // The all-reduce on block 0 (the one-shot, at this size), then a block for each transfer.
    EXPECT_EQ(launches[0].blocks, 3u);
  }
}

}  // namespace
}  // namespace braid
