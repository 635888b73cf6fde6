// Ring schedules (see ring.cc for the algorithm).
#pragma once

#include <cstddef>
#include <vector>

#include "algo/schedule.h"
#include "braid/status.h"

namespace braid::algo {

struct RingParams {
  int nranks = 1;
  int rank = 0;
  std::vector<int> order;    ///< ring order of ranks; empty means 0, 1, ..., nranks-1
  size_t count = 0;          ///< elements per rank
  size_t chunkElems = 1;     ///< most elements one rank-chunk holds in one round
  size_t maxSliceElems = 1;  ///< most elements of one slice (one FIFO slot)
  size_t minSliceElems = 1;  ///< fewest elements worth a slice of their own
  int nchannels = 1;
};

/// All-reduce as reduce-scatter then all-gather around the ring.
Result<Schedule> ringAllReduce(const RingParams& params);

}  // namespace braid::algo
