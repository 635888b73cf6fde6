// Asking the cost model about one call (see model.h).
#include "perf/model.h"

#include <string>

namespace braid::perf {

bool simulateEach(ThreadRanks& ranks, const char* what,
                  const std::function<ncclResult_t(Rank&, size_t)>& call,
                  std::vector<double>* usec) {
  const std::string simulate = std::string(what) + " (ncclGroupSimulateEnd)";
  usec->assign(ranks.ranks().size(), 0);
  // One group per rank, not one for all: the estimate of a group over several
  // communicators is the longest of them, and each rank's own is wanted.
  for (size_t g = 0; g < ranks.ranks().size(); ++g) {
    Rank& r = ranks.ranks()[g];
    ncclResult_t result = ncclGroupStart();
    if (result != ncclSuccess) return ranks.failed("ncclGroupStart", result, &r);
    ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
    const ncclResult_t issued = call(r, g);
    // Closed by simulation even when the call was refused: ncclGroupEnd
    // would run whatever the group already holds.
    result = ncclGroupSimulateEnd(&info);
    if (issued != ncclSuccess) return ranks.failed(what, issued, &r);
    if (result != ncclSuccess) return ranks.failed(simulate.c_str(), result, &r);
    // The marker it starts with, still there: the group ended without an
    // estimate, which a table must not show as a time.
    if (info.estimatedTime == NCCL_UNDEF_FLOAT || !(info.estimatedTime >= 0)) {
      fprintf(stderr, "braid-perf: rank %d: %s left estimatedTime at %g, not an estimate\n", r.rank,
              simulate.c_str(), static_cast<double>(info.estimatedTime));
      return false;
    }
    (*usec)[g] = info.estimatedTime;
  }
  return true;
}

}  // namespace braid::perf
