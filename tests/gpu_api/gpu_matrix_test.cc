// The correctness matrix of every collective on GPU communicators, ranks as threads of this
// process: every collective x datatype x op (sum, prod, max, min, avg, premulsum with either
// scalar residence) x count {0, 1, 7, 1000} x ranks {1, 2, 3, 4} x in and out of place x every
// root, each byte of every buffer checked (matrix_cases.h), with two ranks on each device (four
// ranks on two GPUs, three on two, two on one). (1 << 20) + 3 elements run on a representative
// subset with one thread per rank and a device per rank. On the emulated GPU (label
// emulated-gpu) this runs the CPU instance of the same kernels; on a real one (label gpu) the
// CUDA kernels.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_api/gpu_cases.h"

namespace {

using braid::testing::gpu::devicesFor;
using braid::testing::gpu::GpuRanks;
using braid::testing::matrix::Case;
using braid::testing::matrix::Coll;
using braid::testing::matrix::collName;
using braid::testing::matrix::Op;
using braid::testing::matrix::opName;
using braid::testing::matrix::reduces;
using braid::testing::matrix::rooted;
using braid::testing::matrix::typeInfo;

constexpr int kRankCounts[] = {1, 2, 3, 4};
constexpr size_t kSmallCounts[] = {0, 1, 7, 1000};
constexpr size_t kLargeCount = (size_t{1} << 20) + 3;

using Param = std::tuple<Coll, ncclDataType_t, Op>;

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  const auto [coll, type, op] = info.param;
  std::string name = std::string(collName(coll)) + "_" + typeInfo(type).name;
  if (reduces(coll)) name += std::string("_") + opName(op);
  return name;
}

class GpuMatrixTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override { BRAID_REQUIRE_GPU(); }
  static void SetUpTestSuite() { braid::testing::matrix::keepFreedMemory(); }
  static void TearDownTestSuite() { sets_.clear(); }

  /// The communicators of `nranks` ranks, `perDevice` to a device (0: one each), made once.
  static GpuRanks& ranks(int nranks, int perDevice) {
    auto& set = sets_[{nranks, perDevice}];
    if (!set) set = std::make_unique<GpuRanks>(devicesFor(nranks, perDevice));
    return *set;
  }

  template <typename Roots>
  void runCases(const std::vector<size_t>& counts, Roots roots, bool threads, int perDevice) {
    const auto [coll, type, op] = GetParam();
    braid::testing::matrix::sweepCases(
        coll, type, op, {std::begin(kRankCounts), std::end(kRankCounts)}, counts, roots,
        [&](const Case& c) {
          GpuRanks& g = ranks(c.nranks, perDevice);
          ASSERT_TRUE(g.ok());
          braid::testing::matrix::CaseRun run(c, braid::testing::matrix::testSeed());
          if (threads) {
            braid::testing::gpu::runOnThreads(run, g);
          } else {
            braid::testing::gpu::runInGroup(run, g);
          }
        });
  }

  static std::map<std::pair<int, int>, std::unique_ptr<GpuRanks>> sets_;
};

std::map<std::pair<int, int>, std::unique_ptr<GpuRanks>> GpuMatrixTest::sets_;

std::vector<int> everyRoot(Coll coll, int nranks) {
  std::vector<int> roots;
  for (int r = 0; r < (rooted(coll) ? nranks : 1); ++r) roots.push_back(r);
  return roots;
}

class GpuCollectivesMatrix : public GpuMatrixTest {};

TEST_P(GpuCollectivesMatrix, EveryCountRankCountPlacementAndRoot) {
  const Coll coll = std::get<0>(GetParam());
  runCases(
      {std::begin(kSmallCounts), std::end(kSmallCounts)},
      [coll](int nranks) { return everyRoot(coll, nranks); }, /*threads=*/false,
      /*perDevice=*/2);
}

class GpuCollectivesMatrixLarge : public GpuMatrixTest {};

TEST_P(GpuCollectivesMatrixLarge, OneMebiElementPlusThree) {
  runCases(
      {kLargeCount}, [](int nranks) { return std::vector<int>{nranks - 1}; }, /*threads=*/true,
      /*perDevice=*/0);
}

const ncclDataType_t kAllTypes[] = {ncclInt8,    ncclUint8,    ncclInt32,      ncclUint32,
                                    ncclInt64,   ncclUint64,   ncclFloat16,    ncclFloat32,
                                    ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};

std::vector<Param> fullMatrix() {
  std::vector<Param> params;
  for (Coll coll : braid::testing::matrix::kAllColls) {
    for (ncclDataType_t type : kAllTypes) {
      if (!reduces(coll)) {
        params.emplace_back(coll, type, Op::kSum);
        continue;
      }
      for (Op op : braid::testing::matrix::kAllOps) params.emplace_back(coll, type, op);
    }
  }
  return params;
}

std::vector<Param> largeSubset() {
  std::vector<Param> params;
  for (Coll coll : braid::testing::matrix::kAllColls) {
    if (!reduces(coll)) {
      params.emplace_back(coll, ncclFloat32, Op::kSum);
      continue;
    }
    params.emplace_back(coll, ncclFloat32, Op::kSum);
    params.emplace_back(coll, ncclBfloat16, Op::kAvg);
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(Threads, GpuCollectivesMatrix, ::testing::ValuesIn(fullMatrix()),
                         paramName);
INSTANTIATE_TEST_SUITE_P(Threads, GpuCollectivesMatrixLarge, ::testing::ValuesIn(largeSubset()),
                         paramName);

}  // namespace
