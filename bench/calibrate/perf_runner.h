// Runs braid-perf with a forced algorithm and protocol (BRAID_ALGO,
// BRAID_PROTO), or with the library choosing, and reads its table:
// braid-calibrate measures exactly what a user of braid-perf sees, through
// the public C API in forked processes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "algo/algorithm.h"
#include "braid/status.h"
#include "braid/types.h"

namespace braid::calibrate {

struct PerfRequest {
  std::string perfPath;  ///< the braid-perf executable
  Collective collective = Collective::kAllReduce;
  /// braid-perf's test when it is not one of the collectives ("sendrecv");
  /// empty: the collective's.
  std::string test;
  int nranks = 2;
  algo::Algorithm algorithm = algo::Algorithm::kRing;
  algo::Protocol protocol = algo::Protocol::kSimple;
  size_t minBytes = 8;
  size_t maxBytes = 16 << 20;  ///< sizes grow by stepFactor from minBytes up to this
  int stepFactor = 4;
  /// Force BRAID_ALGO, BRAID_PROTO and BRAID_NCHANNELS=1 (the model's figures are per
  /// algorithm and protocol, one channel). false: the library chooses, as for a user's call,
  /// with BRAID_/NCCL_ALGO and _PROTO removed from the environment (zero-copy runs only then).
  bool forceAlgorithm = true;
  /// braid-perf -R 1: buffers from ncclMemAlloc, which the ranks map (zero-copy reads them in
  /// place).
  bool memAlloc = false;
  /// More environment for the run, "NAME=value" each (BRAID_ZERO_COPY=0).
  std::vector<std::string> env;
  int iters = 30;
  int warmup = 5;
  int repeats = 5;  ///< runs of the whole sweep; each size keeps its least disturbed one
  /// BRAID_TIMEOUT_MS of the run: a combination that hangs fails after this
  /// instead of the library's default of ten minutes.
  int waitTimeoutMs = 30000;
  int runTimeoutS = 600;  ///< the whole braid-perf run is killed after this
};

/// One size of the sweep: the smallest over the repeats of the mean of its
/// out-of-place and in-place times. Another process can only make a sweep
/// slower, so the least disturbed one is the machine's own cost.
struct Sample {
  size_t bytes = 0;
  double us = 0;
};

struct PerfResult {
  /// The library refused the forced algorithm or protocol when the
  /// communicator was created (not implemented or not wired yet).
  bool refused = false;
  /// braid-perf failed for another reason (a broken implementation): the
  /// combination is skipped like a refused one, but reported as a failure.
  bool failed = false;
  std::string reason;  ///< the library's message (refused) or the end of the output (failed)
  std::vector<Sample> samples;
};

/// Runs the sweep `repeats` times. An error only when braid-perf cannot be
/// started or prints no table; refusals and failures are in the result.
Result<PerfResult> runPerf(const PerfRequest& request);

}  // namespace braid::calibrate
