// The rules a call's arguments must follow, written once: Comm::checkCollective applies them to
// every collective, whether it runs at once or is queued in a group, and Comm::allToAllV to the
// layout of its blocks.
//
// They are the checks a rank can make alone: a datatype and a root it knows, buffers present
// where this rank reads or writes, and for the variable-count forms arrays present, this rank's
// count consistent, extents addressable, and no aliasing the schedule cannot honour (overlapping
// output blocks, a send buffer that overlaps the receive buffer other than in the documented
// in-place form). That every rank passes the same counts is the caller's contract (or
// BRAID_CHECK_CALLS's, calls_check.cc).
#pragma once

#include <cstddef>

#include "braid/comm.h"
#include "braid/status.h"
#include "comm/call.h"

namespace braid::comm {

/// The variable-count forms' rules (blocks, layouts): checkArguments' part out of line.
Status checkVariableArguments(const CollectiveCall& call, int rank, int nranks);

/// The uniform layout's buffers: one may be NULL only where this rank neither reads nor
/// writes it.
inline Status checkBuffers(const CollectiveCall& call, int rank) {
  if (call.count == 0) return Status::success();
  if (readsInput(call, rank) && call.input == nullptr) {
    return invalidArgument("sendbuff is NULL with count > 0");
  }
  if (holdsResult(call, rank) && call.output == nullptr) {
    return invalidArgument("recvbuff is NULL with count > 0");
  }
  return Status::success();
}

/// Whether `call` may run on `rank` of a communicator of `nranks`; the error says which
/// argument is wrong, in the C API's names (sendbuff, recvcounts, displs, ...). Inline: every
/// call passes here, a tiny one too.
inline Status checkArguments(const CollectiveCall& call, int rank, int nranks) {
  BRAID_TRY(checkDataType(call.type));
  if (rooted(call.collective)) BRAID_TRY(checkRank(call.root, nranks, "root"));
  if (call.variableCounts || call.blockCounts != nullptr || call.blockOffsets != nullptr) {
    return checkVariableArguments(call, rank, nranks);
  }
  return checkBuffers(call, rank);
}

/// The same for an all-to-all-v (Comm::allToAllV), which runs as a batch of sends and receives.
Status checkAllToAllVArguments(const void* input, const size_t* sendCounts,
                               const size_t* sendDispls, const void* output,
                               const size_t* recvCounts, const size_t* recvDispls, DataType type,
                               int nranks);

}  // namespace braid::comm
