// A thread's ranks: creation in one group, destruction, error reports.
#include "perf/ranks.h"

namespace braid::perf {

ThreadRanks::ThreadRanks(int firstRank, int count, int nranks) : ranks_(count), nranks_(nranks) {
  for (int g = 0; g < count; ++g) ranks_[g].rank = firstRank + g;
}

ThreadRanks::~ThreadRanks() {
  for (Rank& r : ranks_) {
    if (r.comm != nullptr) ncclCommDestroy(r.comm);
  }
}

bool ThreadRanks::init(const ncclUniqueId& id) {
  // The output handles stay where they are until ncclGroupEnd fills them:
  // ranks_ is not resized in between.
  return each("ncclCommInitRank",
              [&](Rank& r, size_t) { return ncclCommInitRank(&r.comm, nranks_, id, r.rank); });
}

bool ThreadRanks::failed(const char* what, ncclResult_t result, const Rank* rank) const {
  // Errors are kept per thread, so any of this thread's communicators names them.
  const char* detail = ncclGetLastError(rank != nullptr ? rank->comm : nullptr);
  if (rank != nullptr) {
    fprintf(stderr, "braid-perf: rank %d: %s failed: %s (%s)\n", rank->rank, what,
            ncclGetErrorString(result), detail);
  } else if (ranks_.size() == 1) {
    fprintf(stderr, "braid-perf: rank %d: %s failed: %s (%s)\n", ranks_[0].rank, what,
            ncclGetErrorString(result), detail);
  } else {
    fprintf(stderr, "braid-perf: ranks %d-%d: %s failed: %s (%s)\n", ranks_.front().rank,
            ranks_.back().rank, what, ncclGetErrorString(result), detail);
  }
  return false;
}

}  // namespace braid::perf
