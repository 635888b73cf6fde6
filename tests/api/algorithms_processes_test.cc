// Each algorithm and protocol forced (BRAID_ALGO, BRAID_PROTO) on ranks that
// are real processes: all_reduce, broadcast and reduce on the tree, the
// ring and (all_reduce) the one-shot, Simple and LL, every datatype, sum and
// max, counts from 1 to past the one-shot board, in and out of place, every
// root. Each process derives all ranks' inputs from the seed the parent
// printed and checks its own buffers (matrix_cases.h), exactly as the
// collective matrix does for the default selection.
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
using braid::testing::matrix::Op;

const ncclDataType_t kAllTypes[] = {ncclInt8,    ncclUint8,    ncclInt32,      ncclUint32,
                                    ncclInt64,   ncclUint64,   ncclFloat16,    ncclFloat32,
                                    ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};

// 1 element; a few chunks; more than the 64 KiB one-shot board holds (so a
// forced one-shot falls back to the ring) and many LL slots.
constexpr size_t kCounts[] = {1, 4099, 40001};

std::vector<Case> casesFor(Coll coll, int nranks) {
  std::vector<Case> cases;
  for (ncclDataType_t type : kAllTypes) {
    for (Op op : {Op::kSum, Op::kMax}) {
      if (coll == Coll::kBroadcast && op != Op::kSum) continue;
      for (size_t count : kCounts) {
        for (bool inPlace : {false, true}) {
          const bool rootedColl = coll != Coll::kAllReduce;
          // Every root at the small count, one at the others.
          const int firstRoot = rootedColl && count == 1 ? 0 : nranks - 1;
          for (int root = firstRoot; root < (rootedColl ? nranks : firstRoot + 1); ++root) {
            cases.push_back({coll, type, op, count, nranks, inPlace, root});
          }
        }
      }
    }
  }
  return cases;
}

using Param = std::tuple<const char*, const char*, Coll, int>;  // algo, proto, coll, nranks

class AlgorithmsProcesses : public ::testing::TestWithParam<Param> {};

TEST_P(AlgorithmsProcesses, MatchReferenceOnEveryRank) {
  const auto [algo, proto, coll, nranks] = GetParam();
  braid::testing::matrix::runCasesInProcesses(nranks, casesFor(coll, nranks),
                                              [algo = algo, proto = proto](int) {
                                                setenv("BRAID_ALGO", algo, 1);
                                                setenv("BRAID_PROTO", proto, 1);
                                              });
}

std::vector<Param> params() {
  std::vector<Param> all;
  for (const char* proto : {"simple", "ll"}) {
    for (int nranks : {3, 4}) {
      for (Coll coll : {Coll::kAllReduce, Coll::kBroadcast, Coll::kReduce}) {
        all.emplace_back("tree", proto, coll, nranks);
      }
      all.emplace_back("ring", proto, Coll::kAllReduce, nranks);
      all.emplace_back("oneshot", proto, Coll::kAllReduce, nranks);
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Forked, AlgorithmsProcesses, ::testing::ValuesIn(params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return std::string(std::get<0>(info.param)) + "_" +
                                  std::get<1>(info.param) + "_" +
                                  collName(std::get<2>(info.param)) + "_" +
                                  std::to_string(std::get<3>(info.param)) + "ranks";
                         });

}  // namespace
