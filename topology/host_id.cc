#include "topology/host_id.h"

#include <sched.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "util/hash.h"

namespace braid::topology {

uint64_t hostId() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  std::string identity = name;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string bootId;
  if (boot >> bootId) identity += "/" + bootId;
  return stableHash(identity);
}

int usableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace braid::topology
