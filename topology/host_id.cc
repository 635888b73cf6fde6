#include "topology/host_id.h"

#include <unistd.h>

#include <fstream>
#include <string>

#include "base/hash.h"
#include "topology/cpu_affinity.h"

namespace braid::topology {

uint64_t hostId(const std::string& override) {
  if (!override.empty()) return stableHash("hostid:" + override);
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  std::string identity = name;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string bootId;
  if (boot >> bootId) identity += "/" + bootId;
  return stableHash(identity);
}

int usableCores() {
  const size_t allowed = allowedCpus().size();
  if (allowed > 0) return static_cast<int>(allowed);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace braid::topology
