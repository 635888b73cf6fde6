// One rank of the soak: its communicators, the steps of the plan until the time is up, the
// check of every call, and its tally.
#pragma once

#include "nccl.h"
#include "soak/options.h"
#include "soak/tally.h"

namespace braid::soak {

/// Runs rank `rank` of `nranks`, its control communicator made from `id`, and fills `tally`.
/// The ranks agree every few steps, over the control communicator, whether any has run out of
/// time, so they stop after the same step. After an error the rank aborts its communicators
/// and stops (its peers then fail too, by the communicators' deadline). With `total` (a rank
/// of a launcher's job, which has no parent to report to) the ranks also sum their tallies
/// there over the control communicator, when this rank saw no error.
void runRank(const Options& o, const ncclUniqueId& id, int rank, int nranks, Tally* tally,
             Tally* total);

}  // namespace braid::soak
