// braid's variable-count collectives (braid_ext.h) as soak calls: braidAllGatherV,
// braidReduceScatterV and braidAlltoAllV with blocks of random counts (zeros among them) in a
// shuffled order with gaps between them, in place where the collective has that form. The
// layouts are drawn from the call's seed, so every rank knows all of them; gaps, guards and
// out-of-place inputs must keep their bytes, copied blocks must arrive byte for byte, and
// reduce-scatter-v's elements must match matrix_reference.h's reference.
#pragma once

#include <memory>

#include "soak/call_run.h"
#include "soak/plan.h"

namespace braid::soak {

std::unique_ptr<CallRun> makeVariableRun(const PlannedCall& call, int rank, int nranks,
                                         const Target& target);

}  // namespace braid::soak
