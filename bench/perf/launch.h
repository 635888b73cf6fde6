// Joining a job started by a launcher (mpirun, torchrun-style env).
#pragma once

#include <string>

namespace braid::perf {

struct LaunchInfo {
  int procRank = 0;
  int nprocs = 1;
  bool launched = false;  ///< false: this process runs alone
};

/// Reads the launcher's environment. When launched, it also points
/// BRAID_COMM_ID at the rendezvous address (MASTER_ADDR:MASTER_PORT; under
/// mpirun without them, 127.0.0.1 and a port derived from the job id), so that
/// ncclGetUniqueId returns the same id in every process and rank 0 listens.
bool detectLauncher(LaunchInfo* out, std::string* error);

}  // namespace braid::perf
