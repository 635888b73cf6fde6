// A call's fields as the profiler plugin's events carry them (profiler/comm_profiler.h), in
// NCCL's words: what Calls hands to the communicator's profiler as a call starts.
#pragma once

#include <vector>

#include "braid/comm.h"
#include "profiler/profiler_plugin.h"
#include "tune/select.h"

namespace braid::comm {

/// A collective's event fields; `choice` (null: none made) names its algorithm and protocol.
profiler::CollFields collEventFields(const CollectiveCall& call, const tune::Choice* choice,
                                     int nchannels);

/// One event's fields per send and per receive of a batch.
std::vector<profiler::P2pFields> p2pEventFields(const std::vector<P2pOp>& ops, int nchannels);

}  // namespace braid::comm
