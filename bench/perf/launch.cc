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

// mpirun gives no rendezvous address; every process of one job sees the same
// job id, so a port derived from it agrees across ranks.
int portFromJobId() {
  const char* job = envOr("OMPI_MCA_ess_base_jobid", envOr("PMIX_NAMESPACE", "braid"));
  uint32_t h = 2166136261u;
  for (const char* p = job; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 16777619u;
  return 20000 + static_cast<int>(h % 20000);
}

}  // namespace

bool detectLauncher(LaunchInfo* out, std::string* error) {
  const char* rank = getenv("OMPI_COMM_WORLD_RANK");
  const char* size = getenv("OMPI_COMM_WORLD_SIZE");
  if (!rank || !size) {
    rank = getenv("RANK");
    size = getenv("WORLD_SIZE");
  }
  if (!rank || !size) return true;  // alone
  if (!parseNonNegative(rank, &out->procRank) || !parseNonNegative(size, &out->nprocs) ||
      out->nprocs == 0 || out->procRank >= out->nprocs) {
    *error = std::string("bad launcher rank/size: ") + rank + " / " + size;
    return false;
  }
  out->launched = true;
  if (!getenv("BRAID_COMM_ID")) {
    std::string addr = envOr("MASTER_ADDR", "127.0.0.1");
    std::string port = envOr("MASTER_PORT", std::to_string(portFromJobId()).c_str());
    if (addr.find(':') != std::string::npos) addr = "[" + addr + "]";  // IPv6
    std::string commId = addr + ":" + port;
    setenv("BRAID_COMM_ID", commId.c_str(), 1);
  }
  return true;
}

}  // namespace braid::perf
