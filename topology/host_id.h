// Which host a rank runs on: ranks with equal host ids can share memory.
//
// Full topology discovery (hwloc, GPUs, NICs) comes later; the first fact the
// communicator needs is whether two ranks share a host, from the host name
// and the kernel's boot id (two containers with the same name differ there).
#pragma once

#include <cstdint>
#include <string>

namespace braid::topology {

/// A 64-bit hash of this host's identity, the same in every process on it; of `override`
/// instead when it is not empty (BRAID_HOSTID).
uint64_t hostId(const std::string& override = "");

/// Cores this process may run on (its affinity mask), at least 1.
int usableCores();

}  // namespace braid::topology
