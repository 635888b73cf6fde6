// Growing a communicator (Comm::grow, ncclCommGrow): every rank of the parent takes part, one of
// them holding the unique id that the new ranks join with. One allGather on the parent's
// bootstrap ring tells every rank that id (and that exactly one rank had it); each then joins
// the new communicator with its old rank, as the new ranks join with theirs. The new
// communicator runs where the parent does: on its device, or on host memory.
#include <cstring>
#include <vector>

#include "base/log.h"
#include "comm/comm_impl.h"

namespace braid {
namespace {

struct GrowOffer {
  uint32_t hasId;
  UniqueId id;
};

}  // namespace

Result<std::unique_ptr<Comm>> Comm::grow(int newSize, const UniqueId* id,
                                         const CommOptions& child) {
  Impl& c = *impl_;
  comm::ActiveCall active = c.health.countCall();
  const int rank = c.members.rank;
  const int nranks = c.members.nranks;
  log::ScopedLogRank logRank(rank);
  if (c.health.finalized()) return invalidUsage("communicator was finalized: it cannot grow");
  if (c.health.aborted()) return invalidUsage("communicator was aborted: it cannot grow");
  if (newSize <= nranks) {
    return invalidArgument("grow to " + std::to_string(newSize) + " ranks: a communicator of " +
                           std::to_string(nranks) + " can only grow to more");
  }
  std::vector<GrowOffer> offers(nranks);
  offers[rank].hasId = id != nullptr;
  if (id != nullptr) offers[rank].id = *id;
  BRAID_TRY(c.members.bootstrap()->allGather(offers.data(), sizeof(GrowOffer)).withContext("grow"));
  int root = -1;
  for (int r = 0; r < nranks; ++r) {
    if (!offers[r].hasId) continue;
    if (root >= 0) {
      return invalidUsage("grow: ranks " + std::to_string(root) + " and " + std::to_string(r) +
                          " both passed a unique id; exactly one rank (the root) passes the id "
                          "from ncclCommGetUniqueId, the others NULL");
    }
    root = r;
  }
  if (root < 0) {
    return invalidUsage(
        "grow: no rank passed a unique id; the root passes the id from "
        "ncclCommGetUniqueId");
  }
  BRAID_INFO("grow: %d ranks to %d, the id from rank %d", nranks, newSize, root);
  return c.createChild(offers[root].id, newSize, rank, child);
}

}  // namespace braid
