// The symmetric way of GPU communicators (comm/ways/gpu_symmetric_way.cc) on the emulated GPU,
// ranks as threads of this process. Each rank's window is laid out by hand as
// ncclCommWindowRegister lays it out (include/nccl_device/window_layout.h): its table of every
// rank's buffer is the all_gather of the ranks' base pointers over the communicator itself (the
// threads share one address space), and Comm::setWindowLookup hands the windows to the
// communicator as the window registry does.
//
// With BRAID_SYMMETRIC=2 every all_reduce (one-shot and two-shot, in place and not),
// reduce_scatter and all_gather on windowed buffers runs one symmetric call (the launches seen
// by a recording runtime say so) and gives every rank the bits of a fold from rank 0 up; a call
// whose buffer lies outside the window, or a window without NCCL_WIN_COLL_SYMMETRIC, runs the
// ordinary kernels; BRAID_SYMMETRIC=0 never takes the symmetric way.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "braid/comm.h"
#include "gpu/runtime.h"
#include "kernels/engine/launch.h"
#include "kernels/host_reduce.h"
#include "nccl_device/window_layout.h"
#include "support/in_order_reference.h"
#include "support/recording_runtime.h"
#include "support/scoped_env.h"
#include "support/thread_comms.h"

namespace braid {
namespace {

namespace engine = kernels::engine;
using Bytes = std::vector<unsigned char>;
using testing::RecordingRuntime;

constexpr int kMaxRanks = 4;
constexpr size_t kPoolBytes = 4 << 20;   // an all_reduce of 1 MiB and its output
constexpr int kWinCollSymmetric = 0x01;  // NCCL_WIN_COLL_SYMMETRIC

/// The fold of every rank's loaded input from rank 0 up, then op's finish.
Bytes rankOrderFold(DataType type, RedOp op, int nranks, const std::vector<Bytes>& inputs,
                    size_t count) {
  kernels::OpArgs args;
  args.nranks = nranks;
  return testing::rankOrderReference(type, op, args, inputs, count);
}

class GpuSymmetricWay : public ::testing::Test {
 protected:
  /// Makes `n` ranks on devices 0..n-1 with BRAID_SYMMETRIC=`mode`, each with a window over a
  /// pool of kPoolBytes registered with `flags`: laid out by hand, or (`registered`) a pool of
  /// shareable memory registered with Comm::registerWindow, as ncclCommWindowRegister does,
  /// found by the communicator's own window registry.
  void start(int n, const char* mode, int flags = kWinCollSymmetric, const char* algo = nullptr,
             bool registered = false) {
    testing::ScopedEnv symmetric("BRAID_SYMMETRIC", mode);
    std::optional<testing::ScopedEnv> forced;
    if (algo != nullptr) forced.emplace("BRAID_SYMMETRIC_ALGO", algo);
    std::vector<int> devices;
    for (int r = 0; r < n; ++r) devices.push_back(r);
    testing::ThreadComms made = testing::createThreadComms(devices);
    comms_ = std::move(made.comms);
    pools_.assign(n, nullptr);
    tables_.assign(n, nullptr);
    windows_.assign(n, nullptr);
    for (int r = 0; r < n; ++r) {
      ASSERT_TRUE(comms_[r]) << "rank " << r << ": " << made.failures[r].message();
      ASSERT_TRUE(runtime_.setDevice(r).ok());
      streams_.push_back(runtime_.streamCreate().value());
      if (registered) {
        pools_[r] = static_cast<char*>(runtime_.vmmAlloc(kPoolBytes).value());
        continue;
      }
      pools_[r] = static_cast<char*>(runtime_.deviceAlloc(kPoolBytes).value());
      tables_[r] = static_cast<char**>(runtime_.deviceAlloc(n * sizeof(char*)).value());
      windows_[r] =
          static_cast<ncclWindow_vidmem*>(runtime_.deviceAlloc(sizeof(ncclWindow_vidmem)).value());
    }
    if (registered) {
      registered_ = true;
      onEveryRank([&](int r) {
        Result<void*> window = comms_[r]->registerWindow(pools_[r], kPoolBytes, flags);
        ASSERT_TRUE(window.ok()) << window.status().message();
        ASSERT_NE(window.value(), nullptr) << "rank " << r << ": the communicator made no window";
        windows_[r] = static_cast<ncclWindow_vidmem*>(window.value());
      });
      runtime_.clear();
      return;
    }
    // The table of every rank's pool: the all_gather of the pools' addresses (this first call
    // has no window yet, so it runs the ordinary way).
    onEveryRank([&](int r) {
      const uint64_t mine = reinterpret_cast<uintptr_t>(pools_[r]);
      ASSERT_TRUE(runtime_.copy(pools_[r], &mine, sizeof mine, streams_[r]).ok());
      ASSERT_TRUE(
          comms_[r]->allGather(pools_[r], tables_[r], 1, DataType::kUint64, streams_[r]).ok());
      ncclWindow_vidmem w{};
      w.magic = BRAID_WINDOW_MAGIC;
      w.winFlags = flags;
      w.worldRank = w.lsaRank = r;
      w.worldSize = w.lsaSize = n;
      w.size = kPoolBytes;
      w.localBase = pools_[r];
      w.lsaBases = tables_[r];
      ASSERT_TRUE(runtime_.copy(windows_[r], &w, sizeof w, streams_[r]).ok());
      ASSERT_TRUE(runtime_.streamSynchronize(streams_[r]).ok());
      const ncclWindow_vidmem* window = windows_[r];
      char* base = pools_[r];
      comms_[r]->setWindowLookup([window, base](const void* p,
                                                size_t bytes) -> std::optional<WindowedBuffer> {
        const char* at = static_cast<const char*>(p);
        if (at < base || at + bytes > base + kPoolBytes) return std::nullopt;
        return WindowedBuffer{window, window, static_cast<size_t>(at - base)};  // host memory: both
      });
    });
    runtime_.clear();
  }

  void TearDown() override {
    for (size_t r = 0; r < comms_.size(); ++r) {
      (void)runtime_.setDevice(static_cast<int>(r));
      if (r < streams_.size()) (void)runtime_.streamSynchronize(streams_[r]);
      if (registered_) {
        // Deregistering is this rank's alone; the communicator goes, then the pool.
        if (comms_[r] && windows_[r] != nullptr) (void)comms_[r]->deregisterWindow(windows_[r]);
        comms_[r].reset();
        if (r < streams_.size()) (void)runtime_.streamDestroy(streams_[r]);
        if (pools_[r] != nullptr) (void)runtime_.vmmFree(pools_[r]);
        continue;
      }
      comms_[r].reset();
      if (r < streams_.size()) (void)runtime_.streamDestroy(streams_[r]);
      for (void* p : {static_cast<void*>(pools_[r]), static_cast<void*>(tables_[r]),
                      static_cast<void*>(windows_[r])}) {
        if (p != nullptr) (void)runtime_.deviceFree(p);
      }
    }
  }

  int nranks() const { return static_cast<int>(comms_.size()); }

  template <typename Body>
  void onEveryRank(Body body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < nranks(); ++r) {
      threads.emplace_back([&, r] {
        ASSERT_TRUE(runtime_.setDevice(r).ok());
        body(r);
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < nranks(); ++r) ASSERT_TRUE(runtime_.streamSynchronize(streams_[r]).ok());
  }

  /// How many launches since the last clear carried a symmetric call, over all devices.
  size_t symmetricLaunches() {
    size_t count = 0;
    for (const auto& l : runtime_.launches()) {
      for (uint8_t kind : l.kinds) {
        count += kind == static_cast<uint8_t>(engine::CallKind::kSymmetric);
      }
    }
    return count;
  }

  void put(int r, size_t at, const Bytes& bytes) {
    ASSERT_TRUE(runtime_.copy(pools_[r] + at, bytes.data(), bytes.size(), streams_[r]).ok());
  }
  Bytes get(int r, size_t at, size_t bytes) {
    Bytes out(bytes);
    EXPECT_TRUE(runtime_.copy(out.data(), pools_[r] + at, bytes, streams_[r]).ok());
    EXPECT_TRUE(runtime_.streamSynchronize(streams_[r]).ok());
    return out;
  }

  /// An all_reduce of `count` elements from `inAt` to `outAt` of each pool (`outside`: the
  /// output in a buffer of its own, outside the window), checked against the rank-order fold.
  void allReduce(DataType type, RedOp op, size_t count, size_t inAt, size_t outAt,
                 bool outside = false) {
    const size_t bytes = count * dataTypeSize(type);
    std::vector<Bytes> inputs;
    for (int r = 0; r < nranks(); ++r) {
      inputs.push_back(testing::spreadInput(type, count, 1000 * count + r));
    }
    const Bytes want = rankOrderFold(type, op, nranks(), inputs, count);
    std::vector<void*> outs(nranks());
    onEveryRank([&](int r) {
      put(r, inAt, inputs[r]);
      outs[r] = outside ? runtime_.deviceAlloc(bytes).value() : pools_[r] + outAt;
      ASSERT_TRUE(
          comms_[r]->allReduce(pools_[r] + inAt, outs[r], count, type, op, streams_[r]).ok());
    });
    for (int r = 0; r < nranks(); ++r) {
      Bytes got(bytes);
      ASSERT_TRUE(runtime_.setDevice(r).ok());
      ASSERT_TRUE(runtime_.copy(got.data(), outs[r], bytes, streams_[r]).ok());
      ASSERT_TRUE(runtime_.streamSynchronize(streams_[r]).ok());
      EXPECT_TRUE(got == want) << "rank " << r << ", " << count << " elements";
      if (outside) (void)runtime_.deviceFree(outs[r]);
    }
  }

  RecordingRuntime runtime_{kMaxRanks};
  gpu::ScopedRuntime installed_{runtime_};
  std::vector<std::unique_ptr<Comm>> comms_;
  std::vector<gpu::Stream> streams_;
  std::vector<char*> pools_;
  std::vector<char**> tables_;
  std::vector<ncclWindow_vidmem*> windows_;
  bool registered_ = false;  // the windows are the communicators' (Comm::registerWindow)
};

TEST_F(GpuSymmetricWay, AllReduceOnWindowsRunsSymmetricAndMatchesTheRankOrderFold) {
  for (const char* algo : {"oneshot", "twoshot"}) {
    SCOPED_TRACE(algo);
    TearDown();
    comms_.clear();
    streams_.clear();
    start(3, "2", kWinCollSymmetric, algo);
    ASSERT_FALSE(HasFailure());
    allReduce(DataType::kFloat32, RedOp::kSum, 2, 0, 4096);         // 8 bytes
    allReduce(DataType::kBfloat16, RedOp::kAvg, 5000, 64, 200000);  // out of place
    allReduce(DataType::kFloat64, RedOp::kMax, 65536, 8192, 8192);  // in place: two-shot
    EXPECT_EQ(symmetricLaunches(), 3u * 3) << "one symmetric call per rank and call";
  }
}

// Windows that ncclCommWindowRegister's path makes (shareable memory, Comm::registerWindow),
// found by the communicator's own registry: all_reduce from 8 B to 1 MiB (in the pool's first
// half, the output in its second) runs one symmetric call per rank and call, one-shot and
// two-shot, bit for bit the rank-order fold.
TEST_F(GpuSymmetricWay, RegisteredWindowsRunSymmetricFromEightBytesToOneMebibyte) {
  for (const char* algo : {"oneshot", "twoshot"}) {
    SCOPED_TRACE(algo);
    TearDown();
    comms_.clear();
    streams_.clear();
    start(4, "2", kWinCollSymmetric, algo, /*registered=*/true);
    ASSERT_FALSE(HasFailure());
    size_t calls = 0;
    for (size_t bytes = 8; bytes < (1 << 20); bytes *= 8) {
      allReduce(DataType::kFloat32, RedOp::kSum, bytes / 4, 0, kPoolBytes / 2);
      ++calls;
    }
    allReduce(DataType::kFloat32, RedOp::kSum, (1 << 20) / 4, 0, kPoolBytes / 2);  // 1 MiB
    allReduce(DataType::kFloat16, RedOp::kProd, 1000, 0, kPoolBytes / 2);
    calls += 2;
    EXPECT_EQ(symmetricLaunches(), calls * 4) << "one symmetric call per rank and call";
  }
}

TEST_F(GpuSymmetricWay, ReduceScatterAndAllGatherOnWindowsRunSymmetric) {
  start(4, "2");
  ASSERT_FALSE(HasFailure());
  const int n = nranks();
  const size_t count = 777;
  std::vector<Bytes> inputs;
  for (int r = 0; r < n; ++r)
    inputs.push_back(testing::spreadInput(DataType::kInt32, count * n, r));
  const Bytes sum = rankOrderFold(DataType::kInt32, RedOp::kSum, n, inputs, count * n);
  onEveryRank([&](int r) {
    put(r, 0, inputs[r]);
    ASSERT_TRUE(comms_[r]
                    ->reduceScatter(pools_[r], pools_[r] + 65536, count, DataType::kInt32,
                                    RedOp::kSum, streams_[r])
                    .ok());
    // The all_gather of the blocks gives every rank the whole sum again.
    ASSERT_TRUE(
        comms_[r]
            ->allGather(pools_[r] + 65536, pools_[r] + 131072, count, DataType::kInt32, streams_[r])
            .ok());
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(get(r, 131072, count * n * 4) == sum) << "rank " << r;
  }
  EXPECT_EQ(symmetricLaunches(), 2u * n);
}

TEST_F(GpuSymmetricWay, BuffersOutsideTheWindowOrWithoutTheFlagRunTheOrdinaryKernels) {
  start(2, "2");
  ASSERT_FALSE(HasFailure());
  allReduce(DataType::kInt32, RedOp::kSum, 100, 0, 0, /*outside=*/true);
  EXPECT_EQ(symmetricLaunches(), 0u);
  TearDown();
  comms_.clear();
  streams_.clear();
  start(2, "2", /*flags=*/0);
  ASSERT_FALSE(HasFailure());
  allReduce(DataType::kInt32, RedOp::kSum, 100, 0, 4096);
  EXPECT_EQ(symmetricLaunches(), 0u);
}

TEST_F(GpuSymmetricWay, SymmetricZeroNeverTakesTheWay) {
  start(2, "0");
  ASSERT_FALSE(HasFailure());
  allReduce(DataType::kFloat32, RedOp::kSum, 64, 0, 4096);
  EXPECT_EQ(symmetricLaunches(), 0u);
}

}  // namespace
}  // namespace braid
