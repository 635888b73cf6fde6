// How much of a large all-reduce an engine's loops move as 16-byte packs, counted on the emulated
// GPU (kernels/engine/loop_meter.h): a count that no channel divides evenly (2^26 + 1 elements)
// must still leave packs at least 99% of the bytes, for float and for the 16-bit types, since
// every bound between channels, chunks and slices falls on a pack (algo::ScheduleSizes::
// grainElems). Cut per element, as before, every channel but the first started mid-pack, and
// the loops fell back to elements for nearly all of the call. Two ranks as threads on two
// emulated devices; the results are checked too, at both ends and in the middle.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <thread>
#include <vector>

#include "braid/comm.h"
#include "gpu/runtime.h"
#include "kernels/engine/loop_meter.h"
#include "support/thread_comms.h"

namespace braid {
namespace {

namespace engine = kernels::engine;

constexpr int kRanks = 2;
constexpr size_t kOddCount = (size_t{1} << 26) + 1;

struct Case {
  DataType type;
  size_t elemBytes;
  uint64_t oneElement;   ///< the bits of every input element (one byte repeated: fill's pattern)
  uint64_t twoElements;  ///< the bits of their sum over two ranks (exact: twice a value)
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.elemBytes << "-byte elements of type " << static_cast<int>(c.type);
}

/// Runs one all-reduce of kOddCount elements on two ranks and returns the meter's counts.
class GpuPackShare : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    testing::ThreadComms made = testing::createThreadComms({0, 1});
    comms_ = std::move(made.comms);
    for (int r = 0; r < kRanks; ++r) {
      ASSERT_TRUE(comms_[r] && comms_[r]->onGpu())
          << "rank " << r << ": " << made.failures[r].message();
    }
  }

  void TearDown() override {
    for (int r = 0; r < kRanks; ++r) {
      (void)runtime_->setDevice(r);
      comms_[r].reset();
    }
  }

  std::unique_ptr<gpu::Runtime> runtime_ = gpu::makeEmulatedRuntime(kRanks);
  gpu::ScopedRuntime installed_{*runtime_};
  std::vector<std::unique_ptr<Comm>> comms_;
};

TEST_P(GpuPackShare, AnOddCountMovesAlmostAllOfItsBytesAsPacks) {
  const Case c = GetParam();
  const size_t bytes = kOddCount * c.elemBytes;
  std::vector<void*> input(kRanks), output(kRanks);
  std::vector<gpu::Stream> streams(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(runtime_->setDevice(r).ok());
    streams[r] = runtime_->streamCreate().value();
    input[r] = runtime_->deviceAlloc(bytes).value();
    output[r] = runtime_->deviceAlloc(bytes).value();
    ASSERT_TRUE(
        runtime_->fill(input[r], static_cast<int>(c.oneElement & 0xff), bytes, streams[r]).ok());
    ASSERT_TRUE(runtime_->streamSynchronize(streams[r]).ok());
  }
  engine::resetLoopBytes();
  std::vector<std::thread> threads;
  std::vector<Status> results(kRanks, Status::success());
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      (void)runtime_->setDevice(r);
      results[r] =
          comms_[r]->allReduce(input[r], output[r], kOddCount, c.type, RedOp::kSum, streams[r]);
      if (results[r].ok()) results[r] = runtime_->streamSynchronize(streams[r]);
    });
  }
  for (auto& t : threads) t.join();
  const engine::LoopBytes moved = engine::loopBytes();
  for (int r = 0; r < kRanks; ++r) ASSERT_TRUE(results[r].ok()) << results[r].message();

  for (int r = 0; r < kRanks; ++r) {
    for (size_t at : {size_t{0}, kOddCount / 2, kOddCount - 1}) {
      uint64_t got = 0;
      ASSERT_TRUE(runtime_->setDevice(r).ok());
      ASSERT_TRUE(runtime_
                      ->copy(&got, static_cast<char*>(output[r]) + at * c.elemBytes, c.elemBytes,
                             streams[r])
                      .ok());
      ASSERT_TRUE(runtime_->streamSynchronize(streams[r]).ok());
      EXPECT_EQ(got, c.twoElements) << "rank " << r << ", element " << at;
    }
  }
  const uint64_t total = moved.packed + moved.unpacked;
  ASSERT_GE(total, bytes) << "the loops wrote less than one output's bytes";
  EXPECT_GE(static_cast<double>(moved.packed), 0.99 * static_cast<double>(total))
      << moved.packed << " of " << total << " bytes written as packs, " << moved.unpacked
      << " element by element";
  for (int r = 0; r < kRanks; ++r) {
    (void)runtime_->setDevice(r);
    (void)runtime_->deviceFree(input[r]);
    (void)runtime_->deviceFree(output[r]);
    (void)runtime_->streamDestroy(streams[r]);
  }
}

// Inputs of one repeated byte 0x3f: float 0x3f3f3f3f (0.7470...), bfloat16 0x3f3f, half 0x3f3f
// (1.8115...); the sum of two such is the same value with its exponent one higher.
INSTANTIATE_TEST_SUITE_P(Types, GpuPackShare,
                         ::testing::Values(Case{DataType::kFloat32, 4, 0x3f3f3f3f, 0x3fbf3f3f},
                                           Case{DataType::kBfloat16, 2, 0x3f3f, 0x3fbf},
                                           Case{DataType::kFloat16, 2, 0x3f3f, 0x433f}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           switch (info.param.type) {
                             case DataType::kFloat32:
                               return "float32";
                             case DataType::kBfloat16:
                               return "bfloat16";
                             default:
                               return "float16";
                           }
                         });

}  // namespace
}  // namespace braid
