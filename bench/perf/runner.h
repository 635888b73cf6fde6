// One rank's benchmark loop: for each size, time out-of-place and in-place
// calls, check the results, and (on rank 0) print the nccl-tests table row.
#pragma once

#include "nccl.h"
#include "perf/options.h"

namespace braid::perf {

struct RankContext {
  ncclComm_t comm = nullptr;
  int rank = 0;
  int nranks = 1;
};

/// Runs the sweep; returns the number of wrong elements seen over all ranks
/// (the same on every rank), or -1 when a call failed.
long long runBenchmark(const Options& options, const RankContext& ctx);

/// Prints the header nccl-tests prints before the table (rank 0 only).
void printHeader(const Options& options, int nranks, const int* pids);

}  // namespace braid::perf
