// The one-shot all-reduce of GPU communicators (exec/device_one_shot.h, kernels/engine/one_shot.h)
// on the emulated GPU, ranks as threads of this process: the fold program is foldInOrder's
// association within the kernel's stack; boards of 2, 3 and 5 ranks reduce runs of calls whose
// sizes rise and fall (so an area holds lines of older calls past the newest one's) with a flag
// period of 3, so that flags repeat and areas are zeroed every few calls, and every rank gets the
// reference's int32 sums on every call; every type and operator on 2 to 8 ranks, in place and
// not, gives the bits of the host loops folded in the in-order tree's order; a rank whose peer
// never pushes gives up at the deadline naming it, and ranks that call with other counts each
// see the other's size.
//
// The push model itself: a rank whose peers' operands lie in its own board (stored there by the
// test as the peers would push them, the peers' own boards left empty and their kernels never
// launched) finishes its call from that alone, and its own operand lands in each peer's board.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "algo/tree.h"
#include "exec/device_one_shot.h"
#include "gpu/runtime.h"
#include "kernels/dispatch.h"
#include "kernels/engine_launch.h"
#include "kernels/host_reduce.h"
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

  /// Frees the boards and buffers of the last ranks and makes boards for `n`.
  void remakeBoards(int n) {
    TearDown();
    ranks_.clear();
    device_.clear();
    makeBoards(n);
  }

  void* device(size_t bytes) {
    void* p = take(rt().deviceAlloc(bytes));
    device_.push_back(p);
    return p;
  }

  /// Enqueues rank r's one-shot int32 sum of `count` elements.
  void launch(int r, const void* in, void* out, size_t count, uint64_t timeoutNs) {
    kernels::OpArgs op;
    op.nranks = static_cast<int>(ranks_.size());
    launch(r, in, out, count, timeoutNs, DataType::kInt32, RedOp::kSum, op);
  }

  /// Enqueues rank r's one-shot all-reduce of `count` elements of `type` with `op`.
  void launch(int r, const void* in, void* out, size_t count, uint64_t timeoutNs, DataType type,
              RedOp redOp, const kernels::OpArgs& op) {
    engine::EngineArgs a{};
    engine::EngineCall& call = a.calls[0];
    call.oneShot = ranks_[r].board->board();
    call.nchannels = 1;
    call.input = in;
    call.output = out;
    call.sliceElems = count;
    call.elemBytes = static_cast<uint32_t>(dataTypeSize(type));
    call.type = static_cast<uint8_t>(type);
    call.op = static_cast<uint8_t>(redOp);
    call.args = op;
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
    remakeBoards(n);
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

bool isInteger(DataType type) {
  return static_cast<int>(type) <= static_cast<int>(DataType::kUint64);
}

/// `x` as an element of the floating type `type`, in its bytes.
std::vector<unsigned char> floatElement(DataType type, double x) {
  std::vector<unsigned char> out(dataTypeSize(type));
  kernels::dispatchType(type, 0, [&](auto tag) {
    using T = typename decltype(tag)::Type;
    if constexpr (kernels::kIsNarrowFloat<T>) {
      const T v = T::fromFloat(static_cast<float>(x));
      memcpy(out.data(), &v, sizeof v);
    } else if constexpr (std::is_floating_point<T>::value) {
      const T v = static_cast<T>(x);
      memcpy(out.data(), &v, sizeof v);
    }
    return 0;
  });
  return out;
}

/// `count` random elements of `type`: any bits for integers; for floats values of a few units
/// times 2^-6 .. 2^5 (`spread`), so that another order of additions rounds differently, or of a
/// few units (products; no NaN, whose payload no reference pins down).
std::vector<unsigned char> randomElements(DataType type, size_t count, bool spread,
                                          std::mt19937_64& rng) {
  const size_t size = dataTypeSize(type);
  std::vector<unsigned char> out(count * size);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t bits = rng();
    if (isInteger(type)) {
      memcpy(out.data() + i * size, &bits, size);
    } else {
      const double scale = spread ? std::ldexp(1.0, static_cast<int>((bits >> 32) % 12) - 6) : 1;
      const double x = static_cast<double>(static_cast<int64_t>(bits % 2001) - 1000) / 256 * scale;
      memcpy(out.data() + i * size, floatElement(type, x).data(), size);
    }
  }
  return out;
}

/// The host loops' all-reduce of `inputs` folded in the in-order tree's order, or from rank 0
/// up (`leftToRight`: the order the test shows would give other bits).
std::vector<unsigned char> inOrderReference(DataType type, RedOp op, const kernels::OpArgs& args,
                                            const std::vector<std::vector<unsigned char>>& inputs,
                                            size_t count, bool leftToRight = false) {
  const Result<kernels::HostOp> h = kernels::hostOp(type, op, args);
  EXPECT_TRUE(h.ok());
  if (!h.ok()) return {};
  const int n = static_cast<int>(inputs.size());
  std::vector<std::vector<unsigned char>> loaded = inputs;
  for (int r = 0; r < n; ++r) {
    h.value().loadInput(loaded[r].data(), inputs[r].data(), count, dataTypeSize(type));
  }
  auto combine = [&](std::vector<unsigned char> a, const std::vector<unsigned char>& b) {
    h.value().combine(h.value().args, a.data(), a.data(), b.data(), count);
    return a;
  };
  std::vector<unsigned char> out = loaded[0];
  if (leftToRight) {
    for (int r = 1; r < n; ++r) out = combine(out, loaded[r]);
  } else {
    out = algo::foldInOrder(
        n, [&](int r) { return loaded[r]; }, combine);
  }
  h.value().finishOutput(out.data(), count);
  return out;
}

TEST_F(DeviceOneShotRuns, EveryTypeAndOperatorOnTwoToEightRanksGivesTheInOrderFoldsBits) {
  const RedOp ops[] = {RedOp::kSum, RedOp::kProd, RedOp::kMax,
                       RedOp::kMin, RedOp::kAvg,  RedOp::kPreMulSum};
  size_t orderMatters = 0;  // cases where folding from rank 0 up gives other bits
  for (int n = 2; n <= 8; ++n) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    remakeBoards(n);
    ASSERT_FALSE(HasFailure());
    std::mt19937_64 rng(0x1ce + n);
    for (int t = 0; t < kNumDataTypes; ++t) {
      for (RedOp op : ops) {
        const auto type = static_cast<DataType>(t);
        const size_t size = dataTypeSize(type);
        const size_t count = 1 + rng() % 200;  // most end mid-line
        const bool inPlace = rng() % 2 == 0;
        SCOPED_TRACE(std::string(dataTypeName(type)) + " op " +
                     std::to_string(static_cast<int>(op)) + ", " + std::to_string(count) +
                     (inPlace ? " in place" : ""));
        kernels::OpArgs args;
        args.nranks = n;
        if (op == RedOp::kPreMulSum) {
          const uint64_t three = 3;
          args.setScalar(
              isInteger(type) ? static_cast<const void*>(&three) : floatElement(type, 0.75).data(),
              size);
        }
        std::vector<std::vector<unsigned char>> inputs;
        for (int r = 0; r < n; ++r)
          inputs.push_back(randomElements(type, count, op != RedOp::kProd, rng));
        const std::vector<unsigned char> want = inOrderReference(type, op, args, inputs, count);
        orderMatters += want != inOrderReference(type, op, args, inputs, count, true);
        std::vector<void*> outs(n);
        for (int r = 0; r < n; ++r) {
          void* in = device(count * size);
          outs[r] = inPlace ? in : device(count * size);
          ASSERT_TRUE(rt().copy(in, inputs[r].data(), count * size, ranks_[r].stream).ok());
          launch(r, in, outs[r], count, uint64_t{30} * 1000 * 1000 * 1000, type, op, args);
        }
        for (int r = 0; r < n; ++r) {
          std::vector<unsigned char> got(count * size);
          ASSERT_TRUE(rt().copy(got.data(), outs[r], got.size(), ranks_[r].stream).ok());
          ASSERT_TRUE(rt().streamSynchronize(ranks_[r].stream).ok());
          ASSERT_EQ(engine::loadAcquire(&ranks_[r].fault->code), 0u) << "rank " << r;
          ASSERT_EQ(memcmp(got.data(), want.data(), got.size()), 0) << "rank " << r;
        }
      }
    }
  }
  EXPECT_GT(orderMatters, 0u) << "no case tells the in-order fold from another order";
}

/// Rank `r`'s OneShotBoard, read back from its device memory.
engine::OneShotBoard boardOf(const Rank& rank) {
  engine::OneShotBoard b{};
  EXPECT_TRUE(rt().copy(&b, rank.board->board(), sizeof b, rank.stream).ok());
  EXPECT_TRUE(rt().streamSynchronize(rank.stream).ok());
  return b;
}

/// The cells writer w pushes for its first call (generation 0: flag 1) of `words` (int32).
std::vector<uint64_t> firstCallArea(const std::vector<int32_t>& words) {
  std::vector<uint64_t> cells(2 * engine::oneShotAreaLines(words.size() * sizeof(int32_t)), 0);
  cells[0] = engine::makeCell(1, engine::sliceWord(words.size() * sizeof(int32_t), true));
  for (size_t i = 0; i < words.size(); ++i) {
    cells[2 + i] = engine::makeCell(1, static_cast<uint32_t>(words[i]));
  }
  if (words.size() % 2 != 0) cells[2 + words.size()] = engine::makeCell(1, 0);  // the padding
  return cells;
}

TEST_F(DeviceOneShotRuns, ARankFinishesFromItsOwnBoardAloneAndItsOperandLandsInEachPeers) {
  const int n = 3;
  makeBoards(n);
  ASSERT_FALSE(HasFailure());
  const size_t count = 37;
  std::vector<std::vector<int32_t>> inputs(n, std::vector<int32_t>(count));
  std::vector<int32_t> want(count, 0);
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < count; ++i) {
      inputs[r][i] = static_cast<int32_t>(1000 * r + i);
      want[i] += inputs[r][i];
    }
  }
  // Peers 1 and 2 push their operands into rank 0's board, as their kernels would; their own
  // boards stay zero and their kernels never run, so rank 0 can only have read its own board.
  const engine::OneShotBoard mine = boardOf(ranks_[0]);
  for (uint32_t w = 1; w < n; ++w) {
    const std::vector<uint64_t> area = firstCallArea(inputs[w]);
    ASSERT_TRUE(rt().copy(engine::oneShotLine(mine, 0, 0, w, 0), area.data(),
                          area.size() * sizeof(uint64_t), ranks_[0].stream)
                    .ok());
  }
  void* in = device(count * sizeof(int32_t));
  void* out = device(count * sizeof(int32_t));
  ASSERT_TRUE(rt().copy(in, inputs[0].data(), count * sizeof(int32_t), ranks_[0].stream).ok());
  launch(0, in, out, count, uint64_t{30} * 1000 * 1000 * 1000);
  std::vector<int32_t> got(count);
  ASSERT_TRUE(rt().copy(got.data(), out, count * sizeof(int32_t), ranks_[0].stream).ok());
  ASSERT_TRUE(rt().streamSynchronize(ranks_[0].stream).ok());
  ASSERT_EQ(engine::loadAcquire(&ranks_[0].fault->code), 0u) << "peer " << ranks_[0].fault->peer;
  EXPECT_EQ(got, want);

  // Rank 0's operand now lies in its area of each peer's board, cell for cell, and its pushed
  // word there says the call is stored.
  const std::vector<uint64_t> pushed = firstCallArea(inputs[0]);
  for (int q = 1; q < n; ++q) {
    const engine::OneShotBoard theirs = boardOf(ranks_[q]);
    std::vector<uint64_t> area(pushed.size());
    ASSERT_TRUE(rt().copy(area.data(), engine::oneShotLine(theirs, q, 0, 0, 0),
                          area.size() * sizeof(uint64_t), ranks_[q].stream)
                    .ok());
    uint64_t word = 0;
    ASSERT_TRUE(
        rt().copy(&word, engine::oneShotPushed(theirs, q), sizeof word, ranks_[q].stream).ok());
    ASSERT_TRUE(rt().streamSynchronize(ranks_[q].stream).ok());
    EXPECT_EQ(area, pushed) << "rank " << q << "'s board";
    EXPECT_EQ(word, 1u) << "rank " << q << "'s board";
  }
}

}  // namespace
}  // namespace braid
