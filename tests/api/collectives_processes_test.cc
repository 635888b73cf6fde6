// A representative part of the collective matrix with each rank in its own process (fork, a
// unique id made in the parent): every collective on 3 and 4 ranks, float32 sum, int32 max and
// bfloat16 avg (float32, int32 and bfloat16 for the collectives that only move data), counts
// 1, 1000 and (1 << 20) + 3, in and out of place, every root (shift) at the small counts and the
// last rank at the large one. Every process derives all ranks' inputs from the seed the parent
// printed, runs its own rank's call and checks its own buffers (matrix_cases.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "api/matrix_cases.h"
#include "api/process_cases.h"

namespace {

using braid::testing::matrix::Case;
using braid::testing::matrix::Coll;
using braid::testing::matrix::collName;
using braid::testing::matrix::hasInPlace;
using braid::testing::matrix::hasOutOfPlace;
using braid::testing::matrix::Op;
using braid::testing::matrix::reduces;
using braid::testing::matrix::rooted;

constexpr size_t kCounts[] = {1, 1000, (size_t{1} << 20) + 3};
constexpr size_t kLargeCount = (size_t{1} << 20) + 3;

struct TypeOp {
  ncclDataType_t type;
  Op op;
};
constexpr TypeOp kTypeOps[] = {
    {ncclFloat32, Op::kSum}, {ncclInt32, Op::kMax}, {ncclBfloat16, Op::kAvg}};

/// The cases one rank runs, in the same order on every rank.
std::vector<Case> casesFor(Coll coll, int nranks) {
  std::vector<Case> cases;
  for (const TypeOp& to : kTypeOps) {
    for (size_t count : kCounts) {
      for (bool inPlace : {false, true}) {
        if (inPlace ? !hasInPlace(coll) : !hasOutOfPlace(coll)) continue;
        const int firstRoot = rooted(coll) && count != kLargeCount ? 0 : nranks - 1;
        for (int root = firstRoot; root < (rooted(coll) ? nranks : firstRoot + 1); ++root) {
          cases.push_back({coll, to.type, to.op, count, nranks, inPlace, root});
        }
      }
    }
  }
  return cases;
}

using Param = std::tuple<Coll, int>;

class CollectivesProcesses : public ::testing::TestWithParam<Param> {};

TEST_P(CollectivesProcesses, MatchReferenceOnEveryRank) {
  const auto [coll, nranks] = GetParam();
  braid::testing::matrix::runCasesInProcesses(nranks, casesFor(coll, nranks));
}

std::vector<Param> params() {
  std::vector<Param> all;
  for (Coll coll : braid::testing::matrix::kAllColls) {
    for (int nranks : {3, 4}) all.emplace_back(coll, nranks);
  }
  return all;
}

// The same on 3 ranks with the outgoing slots written by non-temporal stores
// (BRAID_STREAM_SLOTS=1; what the auto setting picks where a cache line travels far between the
// host's CPUs, which this machine may or may not measure): the large count's slices are streamed,
// in every step that sends (a copy, a reduction kept and sent, a received slice passed on).
class CollectivesProcessesStreamed : public ::testing::TestWithParam<Coll> {};

TEST_P(CollectivesProcessesStreamed, MatchReferenceOnEveryRank) {
  setenv("BRAID_STREAM_SLOTS", "1", 1);
  braid::testing::matrix::runCasesInProcesses(3, casesFor(GetParam(), 3));
  unsetenv("BRAID_STREAM_SLOTS");
}

INSTANTIATE_TEST_SUITE_P(Forked, CollectivesProcessesStreamed,
                         ::testing::ValuesIn(braid::testing::matrix::kAllColls),
                         [](const ::testing::TestParamInfo<Coll>& info) {
                           return std::string(collName(info.param)) + "_3ranks";
                         });

INSTANTIATE_TEST_SUITE_P(Forked, CollectivesProcesses, ::testing::ValuesIn(params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return std::string(collName(std::get<0>(info.param))) + "_" +
                                  std::to_string(std::get<1>(info.param)) + "ranks";
                         });

}  // namespace
