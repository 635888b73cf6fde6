// The symmetric kernels (kernels/engine/symmetric.h, exec/device_symmetric.h) on the emulated GPU,
// ranks as threads of this process. Each rank's windows are built by hand as
// ncclCommWindowRegister lays them out (include/nccl_device/window_layout.h): its buffer, and a
// device-readable table of every rank's buffer, which threads of one process address directly.
//
// Checked bit for bit against a reference that folds the ranks' loaded inputs from rank 0 up:
// all_reduce one-shot (out of place) and two-shot (in place and not) at 8 B .. 1 MiB on 2, 3, 4
// and 8 ranks and 1 to 4 blocks; every type and operator; reduce_scatter and all_gather in place
// and not. A rank whose peer never arrives gives up at the deadline naming it, and a window that
// is not live (its magic cleared) is a bad call, not a read through its table.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "exec/device_symmetric.h"
#include "gpu/runtime.h"
#include "kernels/engine_launch.h"
#include "kernels/float_types.h"
#include "kernels/host_reduce.h"
#include "support/engine_launch.h"
#include "support/in_order_reference.h"
#include "support/shared_barrier.h"

namespace braid {
namespace {

namespace engine = kernels::engine;
using Bytes = std::vector<unsigned char>;
constexpr uint64_t kLongWaitNs = uint64_t{60} * 1000 * 1000 * 1000;

gpu::Runtime& symmetricRt() {
  static const std::unique_ptr<gpu::Runtime> emulated = gpu::makeEmulatedRuntime(1);
  return *emulated;
}

/// One rank: its barriers, stream, abort word and fault record, and its two windows (send and
/// receive), each a buffer of kWindowBytes and the window record in device memory.
struct SymmetricRank {
  std::unique_ptr<exec::DeviceSymmetric> symmetric;
  gpu::Stream stream = nullptr;
  uint32_t* abort = nullptr;
  engine::FaultRecord* fault = nullptr;
  char* buffer[2] = {};
  ncclWindow_vidmem* window[2] = {};
};

/// `count` elements of `type` whose float sums depend on their order; fp8 values from floats
/// (random bits would hold NaNs, whose payload no reference pins down).
Bytes inputFor(DataType type, size_t count, uint64_t seed) {
  if (type != DataType::kFloat8e4m3 && type != DataType::kFloat8e5m2) {
    return testing::spreadInput(type, count, seed);
  }
  std::mt19937_64 rng(seed);
  Bytes out(count);
  for (size_t i = 0; i < count; ++i) {
    const float f = static_cast<float>(static_cast<int>(rng() % 61) - 30) / 8;
    out[i] = type == DataType::kFloat8e4m3 ? kernels::Float8e4m3::fromFloat(f).bits
                                           : kernels::Float8e5m2::fromFloat(f).bits;
  }
  return out;
}

class DeviceSymmetricRuns : public ::testing::Test {
 protected:
  static constexpr size_t kWindowBytes = 3 << 20;

  void SetUp() override { ASSERT_TRUE(symmetricRt().setDevice(0).ok()); }

  void TearDown() override {
    for (SymmetricRank& r : ranks_) {
      if (r.stream != nullptr) (void)symmetricRt().streamSynchronize(r.stream);
      r.symmetric.reset();
      if (r.stream != nullptr) (void)symmetricRt().streamDestroy(r.stream);
      if (r.abort != nullptr) (void)symmetricRt().hostFree(r.abort);
      if (r.fault != nullptr) (void)symmetricRt().hostFree(r.fault);
    }
    for (void* p : device_) (void)symmetricRt().deviceFree(p);
    ranks_.clear();
    device_.clear();
  }

  template <typename T>
  T take(Result<T> r) {
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r).value() : T{};
  }

  void* device(size_t bytes) {
    void* p = take(symmetricRt().deviceAlloc(bytes));
    device_.push_back(p);
    return p;
  }

  /// Makes `n` ranks, their barriers each on a thread of its own as ranks do, and their windows.
  void makeRanks(int n) {
    TearDown();
    ranks_.resize(n);
    testing::SharedBarrier barrier(n);
    const uint64_t nonce =
        0x53594d0000ull + static_cast<uint64_t>(getpid()) + (++generation_ << 20);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      SymmetricRank& rank = ranks_[r];
      rank.stream = take(symmetricRt().streamCreate());
      rank.abort = static_cast<uint32_t*>(take(symmetricRt().hostAlloc(sizeof(uint32_t))));
      *rank.abort = 0;
      rank.fault = static_cast<engine::FaultRecord*>(
          take(symmetricRt().hostAlloc(sizeof(engine::FaultRecord))));
      memset(rank.fault, 0, sizeof *rank.fault);
      for (char*& b : rank.buffer) b = static_cast<char*>(device(kWindowBytes));
      threads.emplace_back([&, r] {
        ASSERT_TRUE(symmetricRt().setDevice(0).ok());
        ranks_[r].symmetric = take(exec::DeviceSymmetric::create(
            symmetricRt(), nonce, r, n, transport::cuda_ipc::FifoPlacement::kDeviceMemory,
            [&] { return barrier.wait(); }, ranks_[r].stream));
      });
    }
    for (auto& t : threads) t.join();
    for (int w = 0; w < 2; ++w) {
      std::vector<char*> bases;
      for (const SymmetricRank& rank : ranks_) bases.push_back(rank.buffer[w]);
      for (int r = 0; r < n; ++r) {
        auto* table = static_cast<char**>(device(bases.size() * sizeof(char*)));
        ASSERT_TRUE(
            symmetricRt().copy(table, bases.data(), bases.size() * sizeof(char*), stream(r)).ok());
        ncclWindow_vidmem win{};
        win.magic = BRAID_WINDOW_MAGIC;
        win.worldRank = win.lsaRank = r;
        win.worldSize = win.lsaSize = n;
        win.size = kWindowBytes;
        win.localBase = ranks_[r].buffer[w];
        win.lsaBases = table;
        ranks_[r].window[w] = static_cast<ncclWindow_vidmem*>(device(sizeof win));
        ASSERT_TRUE(symmetricRt().copy(ranks_[r].window[w], &win, sizeof win, stream(r)).ok());
        ASSERT_TRUE(symmetricRt().streamSynchronize(stream(r)).ok());
      }
    }
  }

  gpu::Stream stream(int r) const { return ranks_[r].stream; }
  int nranks() const { return static_cast<int>(ranks_.size()); }

  /// Enqueues rank r's symmetric call of `kind`: input at `inAt` of its send window, output at
  /// `outAt` of its receive window (of its send window when `inPlace`), on `blocks` blocks.
  void launch(int r, engine::SymmetricKind kind, size_t inAt, size_t outAt, bool inPlace,
              size_t count, DataType type, RedOp redOp, const kernels::OpArgs& op, uint32_t blocks,
              uint64_t timeoutNs = kLongWaitNs) {
    const int out = inPlace ? 0 : 1;
    const engine::SymmetricCall* call =
        take(ranks_[r].symmetric->callFor(ranks_[r].window[0], ranks_[r].window[out], kind));
    engine::EngineArgs a{};
    engine::EngineCall& c = a.calls[0];
    c.kind = static_cast<uint8_t>(engine::CallKind::kSymmetric);
    c.symmetric = call;
    c.nchannels = blocks;
    c.input = ranks_[r].buffer[0] + inAt;
    c.output = ranks_[r].buffer[out] + outAt;
    c.sliceElems = count;
    c.elemBytes = static_cast<uint16_t>(dataTypeSize(type));
    c.type = static_cast<uint8_t>(type);
    c.op = static_cast<uint8_t>(redOp);
    c.copyOnly = kind == engine::SymmetricKind::kAllGather ? 1 : 0;
    c.args = op;
    a.ncalls = 1;
    a.rank = r;
    a.type = c.copyOnly ? static_cast<uint8_t>(DataType::kInt8) : c.type;
    a.op = c.copyOnly ? static_cast<uint8_t>(RedOp::kSum) : c.op;
    a.abortFlag = ranks_[r].abort;
    a.fault = ranks_[r].fault;
    a.timeoutNs = timeoutNs;
    ASSERT_TRUE(testing::launchEngine(symmetricRt(), a, blocks, stream(r)).ok());
  }

  /// Writes rank r's `bytes` at `at` of window w.
  void put(int r, int w, size_t at, const Bytes& bytes) {
    ASSERT_TRUE(
        symmetricRt().copy(ranks_[r].buffer[w] + at, bytes.data(), bytes.size(), stream(r)).ok());
    ASSERT_TRUE(symmetricRt().streamSynchronize(stream(r)).ok());
  }

  /// Waits for rank r and returns `bytes` at `at` of window w; fails on a fault.
  Bytes get(int r, int w, size_t at, size_t bytes) {
    Bytes got(bytes);
    EXPECT_TRUE(symmetricRt().copy(got.data(), ranks_[r].buffer[w] + at, bytes, stream(r)).ok());
    EXPECT_TRUE(symmetricRt().streamSynchronize(stream(r)).ok());
    EXPECT_EQ(engine::loadAcquire(&ranks_[r].fault->code), 0u)
        << "rank " << r << ": fault " << ranks_[r].fault->code << ", peer "
        << ranks_[r].fault->peer;
    return got;
  }

  /// One all_reduce of `kind` on every rank, checked against the rank-order reference.
  void allReduce(engine::SymmetricKind kind, bool inPlace, size_t count, DataType type, RedOp redOp,
                 uint32_t blocks, uint64_t seed) {
    const int n = nranks();
    const size_t bytes = count * dataTypeSize(type);
    kernels::OpArgs args = opArgs(type, redOp);
    args.nranks = n;
    std::vector<Bytes> inputs;
    for (int r = 0; r < n; ++r) inputs.push_back(inputFor(type, count, seed * 131 + r));
    const Bytes want = testing::rankOrderReference(type, redOp, args, inputs, count);
    const size_t inAt = 64;
    const size_t outAt = inPlace ? inAt : 4096;
    for (int r = 0; r < n; ++r) put(r, 0, inAt, inputs[r]);
    for (int r = 0; r < n; ++r)
      launch(r, kind, inAt, outAt, inPlace, count, type, redOp, args, blocks);
    for (int r = 0; r < n; ++r) {
      const Bytes got = get(r, inPlace ? 0 : 1, outAt, bytes);
      ASSERT_TRUE(got == want) << "rank " << r << " of " << n << ", " << dataTypeName(type)
                               << " op " << static_cast<int>(redOp) << ", " << count
                               << " elements on " << blocks << " blocks"
                               << (inPlace ? " in place" : "");
    }
  }

  static kernels::OpArgs opArgs(DataType type, RedOp redOp) {
    kernels::OpArgs args;
    if (redOp == RedOp::kPreMulSum) {
      const bool floating = type == DataType::kFloat16 || type == DataType::kFloat32 ||
                            type == DataType::kFloat64 || type == DataType::kBfloat16 ||
                            type == DataType::kFloat8e4m3 || type == DataType::kFloat8e5m2;
      const uint64_t three = 3;
      Bytes scalar(8, 0);
      if (!floating) {
        memcpy(scalar.data(), &three, 8);
      } else {
        scalar = threeQuarters(type);
      }
      args.setScalar(scalar.data(), dataTypeSize(type));
    }
    return args;
  }

  /// 0.75 in the bytes of the floating type `type`.
  static Bytes threeQuarters(DataType type) {
    Bytes out(8, 0);
    const float f = 0.75f;
    const double d = 0.75;
    const uint16_t half = kernels::Float16::fromFloat(f).bits;
    const uint16_t brain = kernels::Bfloat16::fromFloat(f).bits;
    switch (type) {
      case DataType::kFloat16:
        memcpy(out.data(), &half, 2);
        break;
      case DataType::kBfloat16:
        memcpy(out.data(), &brain, 2);
        break;
      case DataType::kFloat8e4m3:
        out[0] = kernels::Float8e4m3::fromFloat(f).bits;
        break;
      case DataType::kFloat8e5m2:
        out[0] = kernels::Float8e5m2::fromFloat(f).bits;
        break;
      case DataType::kFloat32:
        memcpy(out.data(), &f, 4);
        break;
      default:
        memcpy(out.data(), &d, 8);
    }
    return out;
  }

  std::vector<SymmetricRank> ranks_;
  std::vector<void*> device_;
  uint64_t generation_ = 0;
};

TEST_F(DeviceSymmetricRuns, AllReduceFrom8BytesTo1MiBMatchesTheRankOrderFoldBitForBit) {
  const size_t sizes[] = {8, 24, 1000, 4104, 65536, 262148, 1 << 20};
  for (int n : {2, 3, 4, 8}) {
    makeRanks(n);
    ASSERT_FALSE(HasFailure());
    uint64_t seed = 7 * n;
    for (size_t bytes : sizes) {
      for (auto kind :
           {engine::SymmetricKind::kAllReduceOneShot, engine::SymmetricKind::kAllReduceTwoShot}) {
        const bool twoShot = kind == engine::SymmetricKind::kAllReduceTwoShot;
        const uint32_t blocks = bytes >= 65536 ? 4 : 1;
        const DataType type = bytes % 4 == 0 ? DataType::kFloat32 : DataType::kBfloat16;
        allReduce(kind, false, bytes / dataTypeSize(type), type, RedOp::kSum, blocks, ++seed);
        if (twoShot) {
          allReduce(kind, true, bytes / dataTypeSize(type), type, RedOp::kSum, blocks, ++seed);
        }
        ASSERT_FALSE(HasFailure()) << n << " ranks, " << bytes << " bytes";
      }
    }
  }
}

TEST_F(DeviceSymmetricRuns, AllReduceOfEveryTypeAndOperatorMatchesTheRankOrderFold) {
  const RedOp ops[] = {RedOp::kSum, RedOp::kProd, RedOp::kMax,
                       RedOp::kMin, RedOp::kAvg,  RedOp::kPreMulSum};
  for (int n : {2, 3, 4, 8}) {
    makeRanks(n);
    ASSERT_FALSE(HasFailure());
    std::mt19937_64 rng(0x5e + n);
    for (int t = 0; t < kNumDataTypes; ++t) {
      for (RedOp op : ops) {
        const size_t count = 1 + rng() % 300;
        const bool twoShot = rng() % 2 == 0;
        allReduce(twoShot ? engine::SymmetricKind::kAllReduceTwoShot
                          : engine::SymmetricKind::kAllReduceOneShot,
                  twoShot && rng() % 2 == 0, count, static_cast<DataType>(t), op,
                  1 + static_cast<uint32_t>(rng() % 2), rng());
        ASSERT_FALSE(HasFailure()) << n << " ranks";
      }
    }
  }
}

TEST_F(DeviceSymmetricRuns, ReduceScatterGivesEachRankItsBlockOfTheRankOrderFold) {
  for (int n : {2, 3, 4, 8}) {
    makeRanks(n);
    ASSERT_FALSE(HasFailure());
    for (DataType type : {DataType::kFloat32, DataType::kFloat16, DataType::kInt64}) {
      for (bool inPlace : {false, true}) {
        const size_t count = 1000 + n;  // per rank
        const size_t elem = dataTypeSize(type);
        const kernels::OpArgs args = opArgs(type, RedOp::kSum);
        std::vector<Bytes> inputs;
        for (int r = 0; r < n; ++r) inputs.push_back(inputFor(type, count * n, 11 * n + r));
        const Bytes want = testing::rankOrderReference(type, RedOp::kSum, args, inputs, count * n);
        for (int r = 0; r < n; ++r) put(r, 0, 0, inputs[r]);
        for (int r = 0; r < n; ++r) {
          launch(r, engine::SymmetricKind::kReduceScatter, 0, inPlace ? r * count * elem : 0,
                 inPlace, count, type, RedOp::kSum, args, 2);
        }
        for (int r = 0; r < n; ++r) {
          const Bytes got = get(r, inPlace ? 0 : 1, inPlace ? r * count * elem : 0, count * elem);
          ASSERT_TRUE(memcmp(got.data(), want.data() + r * count * elem, got.size()) == 0)
              << "rank " << r << " of " << n << ", " << dataTypeName(type)
              << (inPlace ? " in place" : "");
        }
      }
    }
  }
}

TEST_F(DeviceSymmetricRuns, AllGatherGivesEveryRankEveryInputInRankOrder) {
  for (int n : {2, 3, 4, 8}) {
    makeRanks(n);
    ASSERT_FALSE(HasFailure());
    for (size_t bytes : {size_t{1}, size_t{13}, size_t{4096}, size_t{100003}}) {
      for (bool inPlace : {false, true}) {
        std::vector<Bytes> inputs;
        Bytes want;
        for (int r = 0; r < n; ++r) {
          inputs.push_back(inputFor(DataType::kUint8, bytes, 3 * n + r + bytes));
          want.insert(want.end(), inputs[r].begin(), inputs[r].end());
        }
        for (int r = 0; r < n; ++r) put(r, 0, inPlace ? r * bytes : 8, inputs[r]);
        for (int r = 0; r < n; ++r) {
          launch(r, engine::SymmetricKind::kAllGather, inPlace ? r * bytes : 8, 0, inPlace, bytes,
                 DataType::kUint8, RedOp::kSum, kernels::OpArgs{}, 3);
        }
        for (int r = 0; r < n; ++r) {
          ASSERT_TRUE(get(r, inPlace ? 0 : 1, 0, n * bytes) == want)
              << "rank " << r << " of " << n << ", " << bytes << " bytes"
              << (inPlace ? " in place" : "");
        }
      }
    }
  }
}

TEST_F(DeviceSymmetricRuns, APeerThatNeverArrivesIsATimeoutNamingIt) {
  makeRanks(3);
  ASSERT_FALSE(HasFailure());
  // SymmetricRank 1 arrives, rank 2 never launches: rank 0 names rank 2.
  for (int r : {0, 1}) {
    launch(r, engine::SymmetricKind::kAllReduceOneShot, 0, 4096, false, 16, DataType::kInt32,
           RedOp::kSum, kernels::OpArgs{}, 1, uint64_t{50} * 1000 * 1000);
  }
  for (int r : {0, 1}) {
    ASSERT_TRUE(symmetricRt().streamSynchronize(stream(r)).ok());
    EXPECT_EQ(engine::loadAcquire(&ranks_[r].fault->code),
              static_cast<uint32_t>(engine::FaultCode::kTimedOut));
    EXPECT_EQ(ranks_[r].fault->peer, 2) << "rank " << r;
  }
}

TEST_F(DeviceSymmetricRuns, AWindowThatIsNotLiveIsABadCall) {
  makeRanks(2);
  ASSERT_FALSE(HasFailure());
  const uint32_t cleared = 0;
  ASSERT_TRUE(
      symmetricRt().copy(&ranks_[0].window[1]->magic, &cleared, sizeof cleared, stream(0)).ok());
  launch(0, engine::SymmetricKind::kAllReduceOneShot, 0, 4096, false, 16, DataType::kInt32,
         RedOp::kSum, kernels::OpArgs{}, 1, uint64_t{50} * 1000 * 1000);
  ASSERT_TRUE(symmetricRt().streamSynchronize(stream(0)).ok());
  EXPECT_EQ(engine::loadAcquire(&ranks_[0].fault->code),
            static_cast<uint32_t>(engine::FaultCode::kBadCall));
}

}  // namespace
}  // namespace braid
