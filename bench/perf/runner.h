// One thread's benchmark loop: for each size, time out-of-place and in-place
// calls over the thread's ranks, check the results, and (on the thread that
// owns rank 0) print the nccl-tests table row.
#pragma once

#include "perf/options.h"
#include "perf/ranks.h"

namespace braid::perf {

/// Runs the sweep on the thread's ranks; returns the number of wrong elements
/// its own ranks found in their outputs, or where they found none the total
/// over all ranks (non-zero only when another rank's output, or braid's sum of
/// the counts, is wrong), or -1 when a call failed.
long long runBenchmark(const Options& options, ThreadRanks& ranks);

/// Prints the header nccl-tests prints before the table (rank 0 only): each
/// rank's pid and device (-1: host memory).
void printHeader(const Options& options, int nranks, const int* pids, const int* devices);

}  // namespace braid::perf
