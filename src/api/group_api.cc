// Groups. Today a group runs its operations in order when the outermost
// ncclGroupEnd is reached. That is NCCL's semantics for collectives of one
// communicator; fusing send/recv pairs and groups over several communicators
// driven by one thread need concurrent execution and are refused with a
// clear error rather than risking a deadlock.
#include <string>
#include <vector>

#include "api/group.h"

namespace braid::api {
namespace {

struct GroupState {
  int depth = 0;
  std::vector<std::function<Status()>> ops;
  std::vector<Comm*> comms;
};

thread_local GroupState tlsGroup;

}  // namespace

int groupDepth() { return tlsGroup.depth; }

ncclResult_t runOrDefer(Comm* comm, std::function<Status()> op) {
  if (tlsGroup.depth == 0) return report(op());
  tlsGroup.ops.push_back(std::move(op));
  tlsGroup.comms.push_back(comm);
  return ncclSuccess;
}

}  // namespace braid::api


namespace {

braid::Status endGroup() {
  auto state = std::move(braid::api::tlsGroup);
  braid::api::tlsGroup = {};
  for (auto* c : state.comms) {
    if (c != state.comms.front()) {
      return braid::invalidUsage(
          "a group with operations on several communicators is not implemented yet; "
          "drive each communicator from its own thread");
    }
  }
  for (auto& op : state.ops) BRAID_TRY(op());
  return braid::Status::success();
}

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclGroupStart) {
  ++braid::api::tlsGroup.depth;
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclGroupEnd) {
  auto& g = braid::api::tlsGroup;
  if (g.depth == 0) {
    return braid::api::report(braid::invalidUsage("ncclGroupEnd without ncclGroupStart"));
  }
  if (--g.depth > 0) return ncclSuccess;
  return braid::api::report(endGroup());
}

BRAID_NCCL_API(ncclResult_t, ncclGroupSimulateEnd, ncclSimInfo_t* simInfo) {
  (void)simInfo;
  auto& g = braid::api::tlsGroup;
  if (g.depth == 0) {
    return braid::api::report(braid::invalidUsage("ncclGroupSimulateEnd without ncclGroupStart"));
  }
  // The group ends without running anything, as NCCL's simulation does.
  if (--g.depth == 0) g = {};
  return braid::api::notImplemented("ncclGroupSimulateEnd",
                                    "it needs the cost model, which is planned");
}
