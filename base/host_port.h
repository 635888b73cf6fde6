// "host:port" as BRAID_COMM_ID (NCCL_COMM_ID) gives the root's address, split
// without resolving anything, so that the syntax can be checked (and fuzzed)
// apart from the name service.
#pragma once

#include <cstdint>
#include <string>

#include "braid/status.h"

namespace braid::sockets {

struct HostPort {
  std::string host;   ///< a name, an IPv4 or an IPv6 literal, without brackets
  uint16_t port = 0;  ///< 1..65535
};

/// Splits "host:port", "[ipv6]:port" or "ipv6-literal:port" (the port after
/// the last colon). kInvalidArgument, quoting `hostPort`, when it is none.
Result<HostPort> splitHostPort(const std::string& hostPort);

}  // namespace braid::sockets
