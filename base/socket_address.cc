// Addresses: printing, parsing and picking them, and describing a connection's two ends: see
// socket_address.h.
#include "base/socket_address.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cstring>

#include "base/host_port.h"
#include "base/ifname_filter.h"
#include "base/log.h"

namespace braid::sockets {
namespace {

bool isLinkLocalV6(const sockaddr* sa) {
  const auto* a6 = reinterpret_cast<const sockaddr_in6*>(sa);
  return IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr);
}

/// The first usable interface address of `family` that passes `filter`.
std::optional<sockaddr_storage> findInterface(const ifaddrs* list, int family,
                                              const InterfaceFilter& filter, bool allowLoopback) {
  for (const ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || ifa->ifa_addr->sa_family != family) continue;
    if ((ifa->ifa_flags & IFF_UP) == 0) continue;
    if ((ifa->ifa_flags & IFF_LOOPBACK) != 0 && !allowLoopback) continue;
    if (family == AF_INET6 && isLinkLocalV6(ifa->ifa_addr)) continue;
    if (!filter.matches(ifa->ifa_name)) continue;
    sockaddr_storage addr{};
    memcpy(&addr, ifa->ifa_addr, family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    BRAID_INFO("bootstrap network: interface %s, address %s", ifa->ifa_name,
               addressToString(addr).c_str());
    return addr;
  }
  return std::nullopt;
}

sockaddr_storage loopbackV4() {
  sockaddr_storage addr{};
  auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
  a4->sin_family = AF_INET;
  a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

/// Whether two addresses are the same host address, whatever their ports.
bool sameHost(const sockaddr_storage& a, const sockaddr* b) {
  if (a.ss_family != b->sa_family) return false;
  if (a.ss_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(b)->sin_addr.s_addr;
  }
  if (a.ss_family == AF_INET6) {
    return memcmp(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr,
                  &reinterpret_cast<const sockaddr_in6*>(b)->sin6_addr, sizeof(in6_addr)) == 0;
  }
  return false;
}

}  // namespace

std::string addressToString(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* a4 = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a4->sin_addr, text, sizeof(text));
    return std::string(text) + ":" + std::to_string(ntohs(a4->sin_port));
  }
  if (addr.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a6->sin6_addr, text, sizeof(text));
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(a6->sin6_port));
  }
  return "<unspecified>";
}
ConnectionEnds connectionEnds(const Socket& socket) {
  ConnectionEnds ends;
  socklen_t len = sizeof(ends.local);
  if (getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&ends.local), &len) != 0) {
    ends.local = {};
  }
  len = sizeof(ends.remote);
  if (getpeername(socket.fd(), reinterpret_cast<sockaddr*>(&ends.remote), &len) != 0) {
    ends.remote = {};
  }
  return ends;
}

std::string interfaceOf(const sockaddr_storage& addr) {
  ifaddrs* list = nullptr;
  if (addr.ss_family == AF_UNSPEC || getifaddrs(&list) != 0) return "";
  std::string name;
  for (const ifaddrs* ifa = list; ifa != nullptr && name.empty(); ifa = ifa->ifa_next) {
    if (ifa->ifa_addr != nullptr && sameHost(addr, ifa->ifa_addr)) name = ifa->ifa_name;
  }
  freeifaddrs(list);
  return name;
}

std::string describe(const ConnectionEnds& ends) {
  const std::string nic = interfaceOf(ends.local);
  return addressToString(ends.local) + (nic.empty() ? "" : " (" + nic + ")") + " -> " +
         addressToString(ends.remote);
}

socklen_t addressLength(const sockaddr_storage& addr) {
  return addr.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

bool isLoopback(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET) {
    const auto* a4 = reinterpret_cast<const sockaddr_in*>(&addr);
    return (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
  }
  if (addr.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    if (IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr)) return true;
    return IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr) && a6->sin6_addr.s6_addr[12] == 127;
  }
  return false;
}

Result<sockaddr_storage> resolveHostPort(const std::string& hostPort) {
  BRAID_ASSIGN_OR_RETURN(const HostPort parts, splitHostPort(hostPort));
  const std::string& host = parts.host;
  const uint16_t portNumber = parts.port;

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    return invalidArgument("cannot resolve '" + host + "': " + gai_strerror(rc));
  }
  const addrinfo* pick = nullptr;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_family == AF_INET && pick == nullptr) pick = ai;
  }
  for (const addrinfo* ai = found; ai != nullptr && pick == nullptr; ai = ai->ai_next) {
    if (ai->ai_family == AF_INET6) pick = ai;
  }
  sockaddr_storage addr{};
  if (pick != nullptr) memcpy(&addr, pick->ai_addr, pick->ai_addrlen);
  freeaddrinfo(found);
  if (pick == nullptr) return invalidArgument("'" + host + "' has no IPv4 or IPv6 address");
  setPort(addr, portNumber);
  return addr;
}

sockaddr_storage pickLocalAddress(const std::optional<std::string>& ifnameFilter) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    BRAID_WARN("getifaddrs failed (%s); using 127.0.0.1", errnoText(errno).c_str());
    return loopbackV4();
  }
  // Without a filter, skip container bridges and loopback as NCCL does.
  InterfaceFilter filter(ifnameFilter.value_or("^docker,lo"));
  bool allowLoopback = ifnameFilter.has_value() && !filter.exclude();
  std::optional<sockaddr_storage> found = findInterface(list, AF_INET, filter, allowLoopback);
  if (!found && ifnameFilter) found = findInterface(list, AF_INET6, filter, allowLoopback);
  freeifaddrs(list);
  if (found) return *found;
  if (ifnameFilter) {
    BRAID_WARN("no interface that is up matches SOCKET_IFNAME='%s'; using 127.0.0.1",
               ifnameFilter->c_str());
  } else {
    BRAID_INFO("bootstrap network: no non-loopback IPv4 interface; using 127.0.0.1");
  }
  return loopbackV4();
}
void setPort(sockaddr_storage& addr, uint16_t port) {
  if (addr.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&addr)->sin_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = htons(port);
  }
}

uint16_t portOf(const sockaddr_storage& addr) {
  return ntohs(addr.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in*>(&addr)->sin_port
                                         : reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
}
}  // namespace braid::sockets
