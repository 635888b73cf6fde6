// The emulated port's GID table: see emulated_gid_table.h.
#include "emulation/ib/emulated_gid_table.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "base/log.h"

namespace braid::transport::ib::emulated {
namespace {

ibv_gid linkLocalGid(int deviceIndex) {
  ibv_gid gid{};
  gid.raw[0] = 0xfe;
  gid.raw[1] = 0x80;
  uint64_t guid = deviceGuid(deviceIndex);
  for (int i = 0; i < 8; ++i) gid.raw[8 + i] = static_cast<uint8_t>(guid >> (56 - 8 * i));
  return gid;
}

/// The RoCE v2 GID of an interface address; false for addresses that get none.
bool gidOfAddress(const sockaddr* sa, ibv_gid* gid) {
  *gid = {};
  if (sa->sa_family == AF_INET) {
    const auto* a4 = reinterpret_cast<const sockaddr_in*>(sa);
    gid->raw[10] = 0xff;
    gid->raw[11] = 0xff;
    memcpy(&gid->raw[12], &a4->sin_addr, 4);
    return true;
  }
  if (sa->sa_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(sa);
    if (IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr)) return false;
    memcpy(gid->raw, &a6->sin6_addr, 16);
    return true;
  }
  return false;
}

void addInterfaceGids(const ifaddrs* list, bool loopback, std::vector<GidEntry>* table) {
  for (const ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || (ifa->ifa_flags & IFF_UP) == 0) continue;
    if (((ifa->ifa_flags & IFF_LOOPBACK) != 0) != loopback) continue;
    GidEntry entry;
    if (!gidOfAddress(ifa->ifa_addr, &entry.gid)) continue;
    entry.type = GidType::kRoceV2;
    bool seen = std::any_of(table->begin(), table->end(), [&](const GidEntry& e) {
      return memcmp(e.gid.raw, entry.gid.raw, 16) == 0;
    });
    if (!seen && table->size() < kMaxGidEntries) table->push_back(entry);
  }
}

}  // namespace

uint64_t deviceGuid(int deviceIndex) {
  // A locally administered EUI-64 ("br" and ff:fe in the middle), one per device.
  return 0x026272fffe000000ull | static_cast<uint64_t>(deviceIndex & 0xffffff);
}

std::vector<GidEntry> buildGidTable(int deviceIndex) {
  std::vector<GidEntry> table;
  table.push_back({linkLocalGid(deviceIndex), GidType::kRoceV1});
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    BRAID_WARN("emulated HCA emu_%d: getifaddrs failed (%s); its GID table has no RoCE v2 entry",
               deviceIndex, strerror(errno));
    return table;
  }
  addInterfaceGids(list, /*loopback=*/false, &table);
  addInterfaceGids(list, /*loopback=*/true, &table);
  freeifaddrs(list);
  return table;
}

bool isRoutable(const ibv_gid& gid) {
  in6_addr addr;
  memcpy(&addr, gid.raw, 16);
  return !IN6_IS_ADDR_LINKLOCAL(&addr) && !IN6_IS_ADDR_UNSPECIFIED(&addr) &&
         !IN6_IS_ADDR_MULTICAST(&addr);
}

sockaddr_storage gidToAddress(const ibv_gid& gid, uint16_t port) {
  sockaddr_storage storage{};
  in6_addr addr;
  memcpy(&addr, gid.raw, 16);
  if (IN6_IS_ADDR_V4MAPPED(&addr)) {
    auto* a4 = reinterpret_cast<sockaddr_in*>(&storage);
    a4->sin_family = AF_INET;
    a4->sin_port = htons(port);
    memcpy(&a4->sin_addr, &gid.raw[12], 4);
  } else {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&storage);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(port);
    a6->sin6_addr = addr;
  }
  return storage;
}

std::string gidToString(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.raw, text, sizeof(text));
  return text;
}

}  // namespace braid::transport::ib::emulated
