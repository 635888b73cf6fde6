// The GID table of an emulated RoCE port, and what a GID means to the emulated fabric.
//
// Index 0 is a RoCE v1 GID: link-local (fe80::/64) with an interface id made from the device
// number, as a real port's default GID is made from its MAC. RoCE v1 frames are plain Ethernet
// and cannot cross an IP router, and the emulated fabric is IP (TCP), so a QP that uses a RoCE v1
// GID, as its source or as its destination, never reaches its peer. Then come RoCE v2 GIDs, one
// per address of each interface that is up: IPv4 addresses IPv4-mapped (::ffff:a.b.c.d), IPv6
// addresses as they are (link-local ones skipped); other interfaces first, loopback last.
#pragma once

#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include "transport/net/ib/verbs_api.h"

namespace braid::transport::ib::emulated {

struct GidEntry {
  ibv_gid gid{};
  GidType type = GidType::kUnknown;
};

/// A real port's table holds up to 256 entries; sgid_index is a byte.
constexpr size_t kMaxGidEntries = 256;

/// The table of device `deviceIndex`, read from getifaddrs() now.
std::vector<GidEntry> buildGidTable(int deviceIndex);

/// The 8 bytes that name device `deviceIndex`: GID 0's interface id and the node GUID.
uint64_t deviceGuid(int deviceIndex);

/// Whether the emulated fabric can carry packets to `gid`: an IPv4-mapped or an IPv6 address
/// that is not link-local (RoCE v1), unspecified or multicast.
bool isRoutable(const ibv_gid& gid);

/// The TCP address of `gid`, port `port`: IPv4 for an IPv4-mapped GID, IPv6 otherwise.
sockaddr_storage gidToAddress(const ibv_gid& gid, uint16_t port);

/// "::ffff:127.0.0.1", for messages.
std::string gidToString(const ibv_gid& gid);

}  // namespace braid::transport::ib::emulated
