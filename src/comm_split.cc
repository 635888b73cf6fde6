// Splitting a communicator (Comm::split, ncclCommSplit): every rank of the
// parent takes part; the ranks that pass one color form a new communicator,
// ordered by key, ties by their rank in the parent.
//
// Two allGathers on the parent's bootstrap ring do it without a new
// rendezvous point: the first tells every rank every (color, key), so each
// rank knows its group, its new rank and its group's first rank (the
// leader); in the second each leader publishes a fresh unique id (its
// process starts that communicator's root), and each rank joins its
// leader's with Comm::create. The new communicator runs where the parent
// does: on its device, or on host memory.
#include <algorithm>
#include <cstring>
#include <vector>

#include "base/log.h"
#include "comm_impl.h"

namespace braid {
namespace {

struct SplitEntry {
  int32_t color;
  int32_t key;
};

// The parent ranks of `color`'s group, in their new order.
std::vector<int> groupOf(const std::vector<SplitEntry>& entries, int32_t color) {
  std::vector<int> members;
  for (int r = 0; r < static_cast<int>(entries.size()); ++r) {
    if (entries[r].color == color) members.push_back(r);
  }
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return entries[a].key < entries[b].key; });
  return members;
}

}  // namespace

Result<std::unique_ptr<Comm>> Comm::split(int color, int key) {
  Impl& c = *impl_;
  ActiveCall active(c.activeCalls);
  log::ScopedLogRank logRank(c.rank);
  if (c.finalized) return invalidUsage("communicator was finalized: it cannot be split");
  if (c.aborted.load()) return invalidUsage("communicator was aborted: it cannot be split");
  if (color < 0 && color != kSplitNoColor) {
    return invalidArgument("color " + std::to_string(color) +
                           " is negative; use a color >= 0, or NCCL_SPLIT_NOCOLOR to take no part");
  }
  std::vector<SplitEntry> entries(c.nranks);
  entries[c.rank] = {color, key};
  BRAID_TRY(c.bootstrap->allGather(entries.data(), sizeof(SplitEntry)).withContext("split"));
  const std::vector<int> group =
      color == kSplitNoColor ? std::vector<int>{} : groupOf(entries, color);
  const bool leader = !group.empty() && group.front() == c.rank;
  std::vector<UniqueId> ids(c.nranks);
  if (leader) {
    BRAID_ASSIGN_OR_RETURN(ids[c.rank], newUniqueId());
  }
  BRAID_TRY(c.bootstrap->allGather(ids.data(), sizeof(UniqueId)).withContext("split"));
  if (color == kSplitNoColor) return std::unique_ptr<Comm>();
  const int newRank =
      static_cast<int>(std::find(group.begin(), group.end(), c.rank) - group.begin());
  BRAID_INFO("split: color %d key %d: rank %d of %zu (parent's leader %d)", color, key, newRank,
             group.size(), group.front());
  return c.createChild(ids[group.front()], static_cast<int>(group.size()), newRank);
}

Result<std::unique_ptr<Comm>> Comm::Impl::createChild(const UniqueId& id, int childRanks,
                                                      int childRank) {
  CommOptions options;
  options.hostMemory = cudaDevice < 0;
  options.device = cudaDevice;
  options.stop = std::make_shared<std::atomic<bool>>(false);
  {
    std::lock_guard<std::mutex> lock(childrenMutex);
    childStops.push_back(options.stop);
  }
  Result<std::unique_ptr<Comm>> child = Comm::create(id, childRanks, childRank, options);
  std::lock_guard<std::mutex> lock(childrenMutex);
  childStops.erase(std::find(childStops.begin(), childStops.end(), options.stop));
  return child;
}

}  // namespace braid
