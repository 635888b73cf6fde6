// The one-shot all-reduce of GPU communicators (exec/device_one_shot.h, kernels/engine/one_shot.h)
// on the emulated GPU, ranks as threads of this process: the fold program is foldInOrder's
// association within the kernel's stack; boards of 2, 3 and 5 ranks reduce runs of calls whose
// sizes rise and fall (so a slot holds cells of older calls past the newest one's) with a flag
// period of 3, so that flags repeat and slots are zeroed every few calls, and every rank gets the
// reference's int32 sums on every call; a rank whose peer never publishes gives up at the
// deadline naming it, and ranks that call with other counts each see the other's size.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "algo/tree.h"
#include "exec/device_one_shot.h"
#include "gpu/runtime.h"
#include "kernels/engine_launch.h"
#include "support/engine_launch.h"
#include "support/shared_barrier.h"

namespace braid {
namespace {

namespace engine = kernels::engine;

gpu::Runtime& rt() {
  static const std::unique_ptr<gpu::Runtime> emulated = gpu::makeEmulatedRuntime(1);
  return *emulated;
}

TEST(DeviceOneShotFold, IsFoldInOrdersAssociationWithinTheKernelsStack) {
  for (int n = 1; n <= static_cast<int>(engine::kMaxOneShotRanks); ++n) {
    const std::vector<int16_t> program = exec::inOrderFoldProgram(n);
    std::vector<std::string> stack;
    size_t deepest = 0;
    for (int16_t f : program) {
      if (f == engine::kFoldCombine) {
        ASSERT_GE(stack.size(), 2u);
        const std::string b = stack.back();
        stack.pop_back();
        stack.back() = "(" + stack.back() + "+" + b + ")";
      } else {
        stack.push_back(std::to_string(f));
      }
      deepest = std::max(deepest, stack.size());
    }
    ASSERT_EQ(stack.size(), 1u);
    EXPECT_EQ(stack[0], algo::foldInOrder(
                            n, [](int r) { return std::to_string(r); },
                            [](const std::string& a, const std::string& b) {
                              return "(" + a + "+" + b + ")";
                            }));
    EXPECT_LE(deepest, engine::kMaxFoldDepth) << n << " ranks";
    EXPECT_LE(program.size(), 2 * engine::kMaxOneShotRanks);
  }
}

/// One rank: its board, stream, abort word and fault record.
struct Rank {
  std::unique_ptr<exec::DeviceOneShot> board;
  gpu::Stream stream = nullptr;
  uint32_t* abort = nullptr;
  engine::FaultRecord* fault = nullptr;
};

class DeviceOneShotRuns : public ::testing::Test {
 protected:
  static constexpr uint32_t kFlagPeriod = 3;
  static constexpr size_t kMaxBytes = 4096;

  void SetUp() override { ASSERT_TRUE(rt().setDevice(0).ok()); }

  void TearDown() override {
    for (Rank& r : ranks_) {
      if (r.stream != nullptr) (void)rt().streamSynchronize(r.stream);
      r.board.reset();
      if (r.stream != nullptr) (void)rt().streamDestroy(r.stream);
      if (r.abort != nullptr) (void)rt().hostFree(r.abort);
      if (r.fault != nullptr) (void)rt().hostFree(r.fault);
    }
    for (void* p : device_) (void)rt().deviceFree(p);
  }

  template <typename T>
  T take(Result<T> r) {
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r).value() : T{};
  }

  /// Makes the boards of `n` ranks, each on a thread of its own as ranks do.
  void makeBoards(int n) {
    ranks_.resize(n);
    testing::SharedBarrier barrier(n);
    const uint64_t nonce = 0x5eed0000ull + static_cast<uint64_t>(getpid());
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      Rank& rank = ranks_[r];
      rank.stream = take(rt().streamCreate());
      rank.abort = static_cast<uint32_t*>(take(rt().hostAlloc(sizeof(uint32_t))));
      *rank.abort = 0;
      rank.fault =
          static_cast<engine::FaultRecord*>(take(rt().hostAlloc(sizeof(engine::FaultRecord))));
      memset(rank.fault, 0, sizeof *rank.fault);
      threads.emplace_back([&, r] {
        ASSERT_TRUE(rt().setDevice(0).ok());
        ranks_[r].board = take(exec::DeviceOneShot::create(
            rt(), nonce, r, n, kMaxBytes, transport::cuda_ipc::FifoPlacement::kDeviceMemory,
            [&] { return barrier.wait(); }, ranks_[r].stream, kFlagPeriod));
      });
    }
    for (auto& t : threads) t.join();
  }

  void* device(size_t bytes) {
    void* p = take(rt().deviceAlloc(bytes));
    device_.push_back(p);
    return p;
  }

  /// Enqueues rank r's one-shot int32 sum of `count` elements.
  void launch(int r, const void* in, void* out, size_t count, uint64_t timeoutNs) {
    engine::EngineArgs a{};
    engine::EngineCall& call = a.calls[0];
    call.oneShot = ranks_[r].board->board();
    call.nchannels = 1;
    call.input = in;
    call.output = out;
    call.sliceElems = count;
    call.elemBytes = sizeof(int32_t);
    call.type = static_cast<uint8_t>(DataType::kInt32);
    call.op = static_cast<uint8_t>(RedOp::kSum);
    call.args.nranks = static_cast<int>(ranks_.size());
    a.ncalls = 1;
    a.rank = r;
    a.type = call.type;
    a.op = call.op;
    a.abortFlag = ranks_[r].abort;
    a.fault = ranks_[r].fault;
    a.timeoutNs = timeoutNs;
    ASSERT_TRUE(testing::launchEngine(rt(), a, 1, ranks_[r].stream).ok());
  }

  std::vector<Rank> ranks_;
  std::vector<void*> device_;
};

TEST_F(DeviceOneShotRuns, RunsOfCallsGiveTheSumsAcrossFlagRepeatsAndZeroedSlots) {
  for (int n : {2, 3, 5}) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    TearDown();
    ranks_.clear();
    device_.clear();
    makeBoards(n);
    ASSERT_FALSE(HasFailure());
    std::mt19937_64 rng(0x0de + n);
    const size_t maxCount = kMaxBytes / sizeof(int32_t);
    const size_t counts[] = {maxCount, 1, 7, maxCount - 1, 3, 1000, 2, maxCount, 5, 513, 1, 64};
    for (size_t call = 0; call < 24; ++call) {
      const size_t count = counts[call % (sizeof counts / sizeof counts[0])];
      std::vector<std::vector<int32_t>> inputs(n, std::vector<int32_t>(count));
      std::vector<int32_t> want(count, 0);
      for (auto& in : inputs) {
        for (size_t i = 0; i < count; ++i) {
          in[i] = static_cast<int32_t>(rng());
          want[i] =
              static_cast<int32_t>(static_cast<uint32_t>(want[i]) + static_cast<uint32_t>(in[i]));
        }
      }
      std::vector<void*> outs(n);
      for (int r = 0; r < n; ++r) {
        void* in = device(count * sizeof(int32_t));
        outs[r] = device(count * sizeof(int32_t));
        ASSERT_TRUE(
            rt().copy(in, inputs[r].data(), count * sizeof(int32_t), ranks_[r].stream).ok());
        launch(r, in, outs[r], count, uint64_t{30} * 1000 * 1000 * 1000);
      }
      for (int r = 0; r < n; ++r) {
        std::vector<int32_t> got(count);
        ASSERT_TRUE(rt().copy(got.data(), outs[r], count * sizeof(int32_t), ranks_[r].stream).ok());
        ASSERT_TRUE(rt().streamSynchronize(ranks_[r].stream).ok());
        ASSERT_EQ(engine::loadAcquire(&ranks_[r].fault->code), 0u)
            << "rank " << r << " call " << call << ": fault, peer " << ranks_[r].fault->peer;
        size_t wrong = 0;
        for (size_t i = 0; i < count; ++i) wrong += got[i] != want[i];
        ASSERT_EQ(wrong, 0u) << "rank " << r << " call " << call << " of " << count;
      }
    }
  }
}

TEST_F(DeviceOneShotRuns, APeerThatNeverPublishesIsATimeoutNamingIt) {
  makeBoards(2);
  ASSERT_FALSE(HasFailure());
  void* in = device(64);
  void* out = device(64);
  ASSERT_TRUE(rt().fill(in, 0, 64, ranks_[0].stream).ok());
  launch(0, in, out, 16, uint64_t{50} * 1000 * 1000);
  ASSERT_TRUE(rt().streamSynchronize(ranks_[0].stream).ok());
  EXPECT_EQ(engine::loadAcquire(&ranks_[0].fault->code),
            static_cast<uint32_t>(engine::FaultCode::kTimedOut));
  EXPECT_EQ(ranks_[0].fault->peer, 1);
}

TEST_F(DeviceOneShotRuns, RanksCallingWithOtherCountsEachSeeTheOthersSize) {
  makeBoards(2);
  ASSERT_FALSE(HasFailure());
  const size_t counts[] = {10, 12};
  for (int r = 0; r < 2; ++r) {
    void* in = device(64);
    ASSERT_TRUE(rt().fill(in, 0, 64, ranks_[r].stream).ok());
    launch(r, in, device(64), counts[r], uint64_t{10} * 1000 * 1000 * 1000);
  }
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(rt().streamSynchronize(ranks_[r].stream).ok());
    EXPECT_EQ(engine::loadAcquire(&ranks_[r].fault->code),
              static_cast<uint32_t>(engine::FaultCode::kSliceMismatch))
        << "rank " << r;
    EXPECT_EQ(ranks_[r].fault->peer, 1 - r);
    EXPECT_EQ(ranks_[r].fault->got, engine::sliceWord(counts[1 - r] * sizeof(int32_t), true));
    EXPECT_EQ(ranks_[r].fault->expected, engine::sliceWord(counts[r] * sizeof(int32_t), true));
  }
}

}  // namespace
}  // namespace braid
