// braid-calibrate's measurement of the zero-copy threshold
// (BRAID_ZERO_COPY_MIN_BYTES, Config::zeroCopyMinBytes). For all_reduce and
// all_gather at each rank count, braid-perf runs a sweep of sizes on buffers
// from ncclMemAlloc (-R 1, which the ranks map, so zero-copy can take them)
// with the library choosing the algorithm, once with BRAID_ZERO_COPY=0 (the
// FIFOs) and once with BRAID_ZERO_COPY=1 BRAID_ZERO_COPY_MIN_BYTES=0
// (zero-copy at every size), alternating, --repeats times each. Each size
// keeps the median of each side's runs, and tune::zeroCopyCrossover finds
// where zero-copy starts to pay.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "braid/status.h"
#include "braid/types.h"
#include "calibrate/calibration.h"
#include "tune/zero_copy_crossover.h"

namespace braid::calibrate {

/// Both paths measured at one collective and rank count.
struct ZeroCopySweep {
  Collective collective = Collective::kAllReduce;
  int nranks = 2;
  std::vector<tune::ZeroCopyPoint> points;  ///< each time the median of the repeats
  std::optional<size_t> crossover;          ///< tune::zeroCopyCrossover of the points
  std::string failure;                      ///< non-empty: a run failed, no points
};

/// Measures every collective and rank count (N >= 2) of `settings`; an error
/// only when braid-perf cannot be run at all.
Result<std::vector<ZeroCopySweep>> measureZeroCopy(const Settings& settings);

/// The measured tables, each crossover, and the recommended
/// BRAID_ZERO_COPY_MIN_BYTES: the largest crossover among the rank counts
/// that do not share CPUs (all of them when every one does), or none.
std::string zeroCopyReport(const std::vector<ZeroCopySweep>& sweeps, const Settings& settings);

}  // namespace braid::calibrate
