// One cell of braid-perf's table: the time of one collective at one size,
// out of place or in place, over a thread's ranks, and the check of its result.
#pragma once

#include <cstddef>
#include <cstdint>

#include "perf/collectives.h"
#include "perf/options.h"
#include "perf/ranks.h"

namespace braid::perf {

/// What one section of the table runs: a collective with one type, operator
/// and root (the operator and root only where the collective has them).
struct Section {
  const CollectiveSpec* spec = nullptr;
  ncclDataType_t type = ncclFloat;
  ncclRedOp_t op = ncclSum;
  int root = -1;  ///< -1 for collectives without a root, as the root column shows
};

struct Measure {
  bool ran = true;  ///< false: the collective has no such form; the cell reads N/A
  double usec = 0;
  long long wrong = 0;      ///< over all ranks, summed by braid's own all-reduce (the table's)
  long long wrongHere = 0;  ///< on this thread's ranks, each counted by the rank, without braid
  bool checked = false;     ///< false: the #wrong column reads N/A
  /// --model, out of place: the cost model's estimate of the call (us),
  /// aggregated over ranks as the time is. The model reads counts and types,
  /// never buffers, so the in-place call's would be the same.
  double modelUsec = 0;
};

/// Times o.iters calls of the section's collective on `g` (the geometry of
/// the row), after o.warmupIters untimed ones; with -c 1 it then checks one
/// more call on every rank. With --model it first asks the cost model about
/// the out-of-place call (ncclGroupSimulateEnd, outside the timed loop). The
/// time, model and #wrong are the same on every thread. Returns false when a
/// call failed (and printed why).
bool measure(const Options& o, ThreadRanks& ranks, const Section& s, const Geometry& g,
             bool inPlace, uint64_t seed, Measure* m);

}  // namespace braid::perf
