// --model: what the library's cost model predicts for one call, asked
// through the public API only (ncclGroupSimulateEnd), as a user would.
#pragma once

#include <functional>
#include <vector>

#include "nccl.h"
#include "perf/ranks.h"

namespace braid::perf {

/// Issues `call` (the call the table times, with the same buffers and
/// arguments) on each of the thread's ranks, alone in a group closed by
/// ncclGroupSimulateEnd, and stores that rank's estimate in (*usec)[g]
/// (microseconds). Nothing runs, so the ranks need not take part together.
/// Returns false when a call or the simulation failed (and printed why).
bool simulateEach(ThreadRanks& ranks, const char* what,
                  const std::function<ncclResult_t(Rank&, size_t)>& call,
                  std::vector<double>* usec);

}  // namespace braid::perf
