// The correctness matrix of every collective through the C API, ranks as threads of this
// process: every collective x datatype x op (sum, prod, max, min, avg, premulsum with either
// scalar residence) x count {0, 1, 7, 1000} x ranks {1, 2, 3, 5, 8} x in and out of place x
// every root (every shift for send/receive), on random inputs from a printed seed
// (BRAID_TEST_SEED repeats a run), each byte of every buffer checked (matrix_cases.h).
//
// Cost: a gtest case per (collective, datatype, op) loops over the rest, so that ctest starts a
// few hundred processes rather than tens of thousands, and each makes one set of communicators
// per rank count. Failures name the full case. The count (1 << 20) + 3 runs on a representative
// subset: every collective with float32 and bfloat16 sum and avg and int8 prod (the collectives
// that only move data: float32, bfloat16, int8), every rank count, both placements, with one
// thread per rank; its root (shift) is the last rank, root 0 being what the small counts cover
// most.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "api/matrix_cases.h"

namespace {

using braid::testing::matrix::Case;
using braid::testing::matrix::Coll;
using braid::testing::matrix::collName;
using braid::testing::matrix::CommSets;
using braid::testing::matrix::Op;
using braid::testing::matrix::opName;
using braid::testing::matrix::reduces;
using braid::testing::matrix::rooted;
using braid::testing::matrix::typeInfo;

constexpr int kRankCounts[] = {1, 2, 3, 5, 8};
constexpr size_t kSmallCounts[] = {0, 1, 7, 1000};
constexpr size_t kLargeCount = (size_t{1} << 20) + 3;

using Param = std::tuple<Coll, ncclDataType_t, Op>;

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  const auto [coll, type, op] = info.param;
  std::string name = std::string(collName(coll)) + "_" + typeInfo(type).name;
  if (reduces(coll)) name += std::string("_") + opName(op);
  return name;
}

class MatrixTest : public ::testing::TestWithParam<Param> {
 protected:
  static void SetUpTestSuite() {
    braid::testing::matrix::keepFreedMemory();
    comms_ = std::make_unique<CommSets>();
  }
  static void TearDownTestSuite() { comms_.reset(); }

  /// Runs every case of this parameter at the given counts; `roots` picks the roots (shifts) of
  /// an nranks case. Each case runs in a group from this thread, or on a thread per rank.
  template <typename Roots>
  void runCases(const std::vector<size_t>& counts, Roots roots, bool threads) {
    const auto [coll, type, op] = GetParam();
    braid::testing::matrix::sweepCases(
        coll, type, op, {std::begin(kRankCounts), std::end(kRankCounts)}, counts, roots,
        [&](const Case& c) {
          const std::vector<ncclComm_t>& comms = comms_->get(c.nranks);
          ASSERT_EQ(comms.size(), static_cast<size_t>(c.nranks));
          braid::testing::matrix::CaseRun run(c, braid::testing::matrix::testSeed());
          if (threads) {
            braid::testing::matrix::runOnThreads(run, comms);
          } else {
            braid::testing::matrix::runInGroup(run, comms);
          }
        });
  }

  static std::unique_ptr<CommSets> comms_;
};

std::unique_ptr<CommSets> MatrixTest::comms_;

std::vector<int> everyRoot(Coll coll, int nranks) {
  std::vector<int> roots;
  for (int r = 0; r < (rooted(coll) ? nranks : 1); ++r) roots.push_back(r);
  return roots;
}

class CollectivesMatrix : public MatrixTest {};

TEST_P(CollectivesMatrix, EveryCountRankCountPlacementAndRoot) {
  const Coll coll = std::get<0>(GetParam());
  runCases(
      {std::begin(kSmallCounts), std::end(kSmallCounts)},
      [coll](int nranks) { return everyRoot(coll, nranks); }, /*threads=*/false);
}

class CollectivesMatrixLarge : public MatrixTest {};

TEST_P(CollectivesMatrixLarge, OneMebiElementPlusThree) {
  runCases(
      {kLargeCount}, [](int nranks) { return std::vector<int>{nranks - 1}; },
      /*threads=*/true);
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
      for (ncclDataType_t type : {ncclFloat32, ncclBfloat16, ncclInt8}) {
        params.emplace_back(coll, type, Op::kSum);
      }
      continue;
    }
    for (ncclDataType_t type : {ncclFloat32, ncclBfloat16}) {
      params.emplace_back(coll, type, Op::kSum);
      params.emplace_back(coll, type, Op::kAvg);
    }
    params.emplace_back(coll, ncclInt8, Op::kProd);
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(Threads, CollectivesMatrix, ::testing::ValuesIn(fullMatrix()), paramName);
INSTANTIATE_TEST_SUITE_P(Threads, CollectivesMatrixLarge, ::testing::ValuesIn(largeSubset()),
                         paramName);

}  // namespace
