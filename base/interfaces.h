// The network interfaces BRAID_SOCKET_IFNAME (NCCL_SOCKET_IFNAME) selects, all of them: the
// socket transport spreads its channels over several, as NCCL's socket network uses every
// interface that matches (each one a NIC to the topology). The bootstrap keeps one
// (pickLocalAddress, socket_address.h).
#pragma once

#include <sys/socket.h>

#include <string>
#include <vector>

namespace braid::sockets {

struct NamedAddress {
  std::string name;  ///< "eth0"
  sockaddr_storage address{};
};

/// The interfaces that are up, carry an address of `family` (AF_INET or AF_INET6, link-local
/// IPv6 addresses left out) and match `filterSpec` (ifname_filter.h's syntax), in the system's
/// order, each once with its first such address. Loopback only where the filter names it.
std::vector<NamedAddress> listInterfaces(const std::string& filterSpec, int family);

}  // namespace braid::sockets
