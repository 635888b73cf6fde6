#include "perf/launch.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace braid::perf {
namespace {

const char* envOr(const char* name, const char* fallback) {
  const char* v = getenv(name);
  return v && *v ? v : fallback;
}

bool parseNonNegative(const char* text, int* out) {
  char* end = nullptr;
  long v = strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 0) return false;
  *out = static_cast<int>(v);
  return true;
}

// mpirun and srun give no rendezvous port; every process of one job (step) sees the same job
// id, so a port derived from it agrees across ranks. It is kept below Linux's default ephemeral
// range (32768-60999), where any outgoing connection of the machine may already hold it: a
// derived 37736 was once taken that way and rank 0 could not start the root.
int portFromJobId() {
  std::string slurm = envOr("SLURM_JOB_ID", "");
  if (!slurm.empty()) slurm += std::string(".") + envOr("SLURM_STEP_ID", "0");
  const char* job = envOr("OMPI_MCA_ess_base_jobid",
                          envOr("PMIX_NAMESPACE", slurm.empty() ? "braid" : slurm.c_str()));
  uint32_t h = 2166136261u;
  for (const char* p = job; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 16777619u;
  return 20000 + static_cast<int>(h % (32768 - 20000));
}

/// The IPv4 address in mpirun's own contact URI ("jobid;tcp://10.0.0.1:port;tcp6://..."), which
/// every rank of the job sees; empty when there is none.
std::string mpirunAddress() {
  const std::string uri = envOr("OMPI_MCA_orte_hnp_uri", "");
  const size_t at = uri.find("tcp://");
  if (at == std::string::npos) return "";
  const size_t start = at + 6;
  const size_t colon = uri.find(':', start);
  return colon == std::string::npos ? "" : uri.substr(start, colon - start);
}

/// Where the bootstrap root listens when the environment does not say (MASTER_ADDR): this host
/// when every rank is on it; across hosts, the host mpirun runs on (with `mpirun -H a,b` from
/// host a, rank 0's), or for Slurm the node srun was started from (in a batch script, the
/// allocation's first node, where task 0 runs). Empty when braid cannot tell.
std::string defaultRootAddress() {
  const char* world = getenv("OMPI_COMM_WORLD_SIZE");
  const char* local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (world && local && std::string(world) != local) return mpirunAddress();
  const char* nodes = getenv("SLURM_NNODES");
  if (getenv("SLURM_PROCID") && nodes && std::string(nodes) != "1") {
    return envOr("SLURM_LAUNCH_NODE_IPADDR", "");
  }
  return "127.0.0.1";
}

}  // namespace

bool detectLauncher(LaunchInfo* out, std::string* error) {
  const char* rank = getenv("OMPI_COMM_WORLD_RANK");
  const char* size = getenv("OMPI_COMM_WORLD_SIZE");
  if (!rank || !size) {
    rank = getenv("RANK");
    size = getenv("WORLD_SIZE");
  }
  if (!rank || !size) {
    rank = getenv("SLURM_PROCID");
    size = getenv("SLURM_NTASKS");
  }
  if (!rank || !size) return true;  // alone
  if (!parseNonNegative(rank, &out->procRank) || !parseNonNegative(size, &out->nprocs) ||
      out->nprocs == 0 || out->procRank >= out->nprocs) {
    *error = std::string("bad launcher rank/size: ") + rank + " / " + size;
    return false;
  }
  out->launched = true;
  if (!getenv("BRAID_COMM_ID")) {
    std::string addr = envOr("MASTER_ADDR", "");
    if (addr.empty()) addr = defaultRootAddress();
    if (addr.empty()) {
      *error = "ranks on several hosts and no MASTER_ADDR: set it to rank 0's host";
      return false;
    }
    std::string port = envOr("MASTER_PORT", std::to_string(portFromJobId()).c_str());
    if (addr.find(':') != std::string::npos) addr = "[" + addr + "]";  // IPv6
    std::string commId = addr + ":" + port;
    setenv("BRAID_COMM_ID", commId.c_str(), 1);
  }
  return true;
}

}  // namespace braid::perf
