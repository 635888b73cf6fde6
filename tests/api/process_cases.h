// Running matrix cases (matrix_cases.h) on ranks that are real processes:
// each forked child joins one communicator and checks its own buffers.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "api/matrix_cases.h"
#include "nccl.h"
#include "support/multiprocess.h"

namespace braid::testing::matrix {

/// Runs rank `rank`'s part of each case in turn on its communicator and
/// checks its buffers. Stops at the first failure: a rank that stopped would
/// leave its peers waiting, so its process ends instead and the others end
/// by the communicator's timeout or the parent's.
inline void runCasesOnRank(const std::vector<Case>& cases, ncclComm_t comm, int rank,
                           uint64_t seed) {
  for (const Case& c : cases) {
    SCOPED_TRACE(caseName(c) + " rank " + std::to_string(rank));
    CaseRun run(c, seed, rank);
    ASSERT_EQ(run.createOp(rank, comm), ncclSuccess) << ncclGetLastError(comm);
    ASSERT_EQ(run.issue(rank, comm), ncclSuccess) << ncclGetLastError(comm);
    ASSERT_EQ(run.destroyOp(rank, comm), ncclSuccess) << ncclGetLastError(comm);
    EXPECT_TRUE(run.check(rank));
    if (::testing::Test::HasFailure()) return;
  }
}

/// Runs `cases` on `nranks` forked processes, each a rank of one new
/// communicator, with inputs from the seed the parent prints.
/// `beforeInit(rank)`, when given, runs in each child before it joins (to set
/// its environment or CPU affinity).
inline void runCasesInProcesses(int nranks, const std::vector<Case>& cases,
                                const std::function<void(int rank)>& beforeInit = nullptr) {
  const uint64_t seed = testSeed();
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess) << ncclGetLastError(nullptr);
  runProcesses(nranks, [&](int rank) {
    if (beforeInit) beforeInit(rank);
    if (::testing::Test::HasFatalFailure()) return;
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, nranks, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    runCasesOnRank(cases, comm, rank, seed);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

}  // namespace braid::testing::matrix
