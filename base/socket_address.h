// Addresses of the out-of-band network: printed, parsed, resolved, their ports set and read, this
// host's picked (by BRAID_SOCKET_IFNAME's filter), and a connection's two ends described for
// errors.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>

#include "base/socket.h"
#include "braid/status.h"

namespace braid::sockets {

/// The two addresses of a connection, taken while it is up: a connection that was reset has no
/// peer name any more, and its error still has to say where it ran.
struct ConnectionEnds {
  sockaddr_storage local{};
  sockaddr_storage remote{};
};
ConnectionEnds connectionEnds(const Socket& socket);
/// "10.0.0.1:41000 (eth0) -> 10.0.0.2:5000": where a connection ran, for errors. The interface
/// is the one that holds the local address now (left out when none does).
std::string describe(const ConnectionEnds& ends);
/// The name of the interface that holds `addr` (its port ignored), or "" when none does.
std::string interfaceOf(const sockaddr_storage& addr);

/// "1.2.3.4:5678" or "[::1]:5678"; "<unspecified>" for AF_UNSPEC.
std::string addressToString(const sockaddr_storage& addr);
/// The length to pass to bind/connect for this address family.
socklen_t addressLength(const sockaddr_storage& addr);
bool isLoopback(const sockaddr_storage& addr);

/// Parses "host:port", "[ipv6]:port" or "ipv6-literal" forms with a port;
/// `host` may be a name, resolved with getaddrinfo (IPv4 preferred).
Result<sockaddr_storage> resolveHostPort(const std::string& hostPort);

/// An address of this host that other hosts can reach, with port 0: the
/// first IPv4 interface that is up and not loopback. `ifnameFilter` is
/// NCCL_SOCKET_IFNAME's syntax: comma-separated name prefixes, "^" in front
/// to exclude them instead, "=" in front for exact names. Falls back to
/// 127.0.0.1 (with a warning when a filter matched nothing).
sockaddr_storage pickLocalAddress(const std::optional<std::string>& ifnameFilter);

/// Sets `addr`'s port (IPv4 or IPv6), and reads it.
void setPort(sockaddr_storage& addr, uint16_t port);
uint16_t portOf(const sockaddr_storage& addr);

}  // namespace braid::sockets
