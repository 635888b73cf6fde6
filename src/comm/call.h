// What the communicator's parts ask of one collective call (braid::CollectiveCall, braid/comm.h),
// and the checks every call shares, with the same messages.
#pragma once

#include <cstddef>
#include <string>

#include "braid/comm.h"
#include "braid/status.h"
#include "braid/types.h"

namespace braid::comm {

/// Whether the collective has a root (broadcast, reduce).
inline bool rooted(Collective collective) {
  return collective == Collective::kBroadcast || collective == Collective::kReduce;
}

/// Whether `rank` reads the call's input: every rank but a broadcast's non-roots.
inline bool readsInput(const CollectiveCall& call, int rank) {
  return call.collective != Collective::kBroadcast || rank == call.root;
}

/// Whether `rank`'s output receives the call's result (and its operator's last step, avg's
/// division): every rank but a reduce's non-roots.
inline bool holdsResult(const CollectiveCall& call, int rank) {
  return call.collective != Collective::kReduce || rank == call.root;
}

/// "AllReduce of 1024 x float sum", "Broadcast of 16 x int8, root 2".
std::string describeCall(const CollectiveCall& call);

/// `type` must be one braid knows.
inline Status checkDataType(DataType type) {
  const int t = static_cast<int>(type);
  if (t < 0 || t >= kNumDataTypes) return invalidArgument("unknown datatype " + std::to_string(t));
  return Status::success();
}

/// `what` (a root, a peer) must name a rank of a communicator of `nranks`.
inline Status checkRank(int value, int nranks, const char* what) {
  if (value < 0 || value >= nranks) {
    return invalidArgument(std::string(what) + " " + std::to_string(value) + " is outside [0, " +
                           std::to_string(nranks) + ")");
  }
  return Status::success();
}

}  // namespace braid::comm
