#include "base/interfaces.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "base/ifname_filter.h"

namespace braid::sockets {

std::vector<NamedAddress> listInterfaces(const std::string& filterSpec, int family) {
  std::vector<NamedAddress> found;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return found;
  const InterfaceFilter filter(filterSpec);
  const bool allowLoopback = !filter.exclude();
  for (const ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || ifa->ifa_addr->sa_family != family) continue;
    if ((ifa->ifa_flags & IFF_UP) == 0) continue;
    if ((ifa->ifa_flags & IFF_LOOPBACK) != 0 && !allowLoopback) continue;
    if (family == AF_INET6 &&
        IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6*>(ifa->ifa_addr)->sin6_addr)) {
      continue;
    }
    if (!filter.matches(ifa->ifa_name)) continue;
    const bool seen = std::any_of(found.begin(), found.end(),
                                  [&](const NamedAddress& n) { return n.name == ifa->ifa_name; });
    if (seen) continue;
    NamedAddress entry;
    entry.name = ifa->ifa_name;
    memcpy(&entry.address, ifa->ifa_addr,
           family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    found.push_back(std::move(entry));
  }
  freeifaddrs(list);
  return found;
}

}  // namespace braid::sockets
