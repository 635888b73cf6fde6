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
#include "comm/comm_impl.h"

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

Result<std::unique_ptr<Comm>> Comm::split(int color, int key, const CommOptions& child) {
  Impl& c = *impl_;
  comm::ActiveCall active = c.health.countCall();
  const int rank = c.members.rank;
  const int nranks = c.members.nranks;
  bootstrap::Bootstrap& bootstrap = *c.members.bootstrap();
  log::ScopedLogRank logRank(rank);
  if (c.health.finalized()) return invalidUsage("communicator was finalized: it cannot be split");
  if (c.health.aborted()) return invalidUsage("communicator was aborted: it cannot be split");
  if (color < 0 && color != kSplitNoColor) {
    return invalidArgument("color " + std::to_string(color) +
                           " is negative; use a color >= 0, or NCCL_SPLIT_NOCOLOR to take no part");
  }
  std::vector<SplitEntry> entries(nranks);
  entries[rank] = {color, key};
  BRAID_TRY(bootstrap.allGather(entries.data(), sizeof(SplitEntry)).withContext("split"));
  const std::vector<int> group =
      color == kSplitNoColor ? std::vector<int>{} : groupOf(entries, color);
  const bool leader = !group.empty() && group.front() == rank;
  std::vector<UniqueId> ids(nranks);
  if (leader) {
    BRAID_ASSIGN_OR_RETURN(ids[rank], newUniqueId());
  }
  BRAID_TRY(bootstrap.allGather(ids.data(), sizeof(UniqueId)).withContext("split"));
  if (color == kSplitNoColor) return std::unique_ptr<Comm>();
  const int newRank = static_cast<int>(std::find(group.begin(), group.end(), rank) - group.begin());
  BRAID_INFO("split: color %d key %d: rank %d of %zu (parent's leader %d)", color, key, newRank,
             group.size(), group.front());
  return c.createChild(ids[group.front()], static_cast<int>(group.size()), newRank, child);
}

Result<std::unique_ptr<Comm>> Comm::Impl::createChild(const UniqueId& id, int childRanks,
                                                      int childRank, const CommOptions& child) {
  CommOptions options;
  options.minChannels = child.minChannels;
  options.maxChannels = child.maxChannels;
  options.name = child.name;
  options.hostMemory = members.cudaDevice < 0;
  options.device = members.cudaDevice;
  options.stop = std::make_shared<std::atomic<bool>>(false);
  return health.withChildStop(options.stop,
                              [&] { return Comm::create(id, childRanks, childRank, options); });
}

}  // namespace braid
