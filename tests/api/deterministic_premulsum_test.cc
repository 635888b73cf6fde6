// BRAID_DETERMINISTIC=1 with premulsum operators on the ring: the owner-computes all-reduce
// (src/comm/ways/deterministic_ring_way.cc) folds every rank's block on one rank, so each rank's
// scalar must be applied where its input is, before the block leaves it, not by the owner with its
// own scalar. braid-soak found the owner's scalar applied to every rank's input (every element
// wrong whenever the scalars differ); this runs premulsum all-reduce on the deterministic ring
// with both residences of the scalar, several types, counts and rank counts, every element
// checked against the reference of the collective matrix (matrix_cases.h).
#include <gtest/gtest.h>

#include <vector>

#include "api/api_test_util.h"
#include "api/matrix_cases.h"

namespace {

using braid::testing::ScopedEnv;
using namespace braid::testing::matrix;

TEST(DeterministicPremulsum, RingAppliesEachRanksScalarToItsOwnInput) {
  ScopedEnv deterministic("BRAID_DETERMINISTIC", "1");
  ScopedEnv ring("BRAID_ALGO", "ring");
  ScopedEnv host("BRAID_HOST_COMM", "1");
  for (int nranks : {2, 3, 4}) {
    std::vector<ncclComm_t> comms(nranks, nullptr);
    ASSERT_EQ(ncclCommInitAll(comms.data(), nranks, nullptr), ncclSuccess)
        << ncclGetLastError(nullptr);
    for (ncclDataType_t type : {ncclFloat32, ncclInt32, ncclBfloat16, ncclFloat8e5m2}) {
      for (Op op : {Op::kPreMulHost, Op::kPreMulDevice}) {
        for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, size_t{100003}}) {
          for (bool inPlace : {false, true}) {
            const Case c{Coll::kAllReduce, type, op, count, nranks, inPlace, 0};
            SCOPED_TRACE(caseName(c));
            CaseRun run(c, testSeed());
            runOnThreads(run, comms);
            if (HasFailure()) break;
          }
        }
      }
    }
    for (ncclComm_t comm : comms) EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  }
}

}  // namespace
