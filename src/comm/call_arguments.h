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

namespace braid::comm {

/// Whether `call` may run on `rank` of a communicator of `nranks`; the error says which
/// argument is wrong, in the C API's names (sendbuff, recvcounts, displs, ...).
Status checkArguments(const CollectiveCall& call, int rank, int nranks);

/// The same for an all-to-all-v (Comm::allToAllV), which runs as a batch of sends and receives.
Status checkAllToAllVArguments(const void* input, const size_t* sendCounts,
                               const size_t* sendDispls, const void* output,
                               const size_t* recvCounts, const size_t* recvDispls, DataType type,
                               int nranks);

}  // namespace braid::comm
