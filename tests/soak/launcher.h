// Starting the soak's ranks: forked processes of this machine, or this process as one rank of
// a job a launcher started (mpirun, srun, torchrun-style; bench/perf/launch.h reads their
// environment). Either way every rank's summary is printed, then the total; the exit code is
// non-zero on any wrong result or error.
#pragma once

#include "soak/options.h"

namespace braid::soak {

/// Forks o.procs ranks, collects their tallies through pipes and prints them; a rank that
/// dies or outlives the run's deadline counts as an error. Returns the exit code.
int runForked(const Options& o);

/// Runs this process as rank `rank` of `nranks`; returns the exit code.
int runJoined(const Options& o, int rank, int nranks);

}  // namespace braid::soak
