#include "transport/net/ib/ib_device.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "transport/net/ib/hca_filter.h"

namespace braid::transport::ib {
namespace {

bool isZero(const ibv_gid& gid) {
  for (uint8_t b : gid.raw) {
    if (b != 0) return false;
  }
  return true;
}

bool isV4Mapped(const ibv_gid& gid) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(gid.raw, prefix, sizeof(prefix)) == 0;
}

bool isLinkLocal(const ibv_gid& gid) { return gid.raw[0] == 0xfe && (gid.raw[1] & 0xc0) == 0x80; }

Status openPort(const VerbsApi& verbs, const IbSettings& settings, ibv_device* device,
                uint8_t portNumber, IbPort* port) {
  const std::string name = port->name();
  port->context = verbs.openDevice(device);
  if (port->context == nullptr) {
    return systemError("verbs: opening " + name + ": " + std::strerror(errno));
  }
  ibv_device_attr deviceAttr{};
  if (int rc = verbs.queryDevice(port->context, &deviceAttr); rc != 0) {
    return systemError("verbs: querying " + name + ": " + std::strerror(rc));
  }
  port->maxQpWr = deviceAttr.max_qp_wr;
  port->completions.setLimit(deviceAttr.max_cqe);
  ibv_port_attr attr{};
  if (int rc = verbs.queryPort(port->context, portNumber, &attr); rc != 0) {
    return systemError("verbs: querying " + name + ": " + std::strerror(rc));
  }
  port->port = portNumber;
  port->linkLayer = attr.link_layer;
  port->activeMtu = attr.active_mtu;
  port->lid = attr.lid;
  if (settings.gidIndex >= 0) {
    port->gidIndex = settings.gidIndex;
  } else if (attr.link_layer == IBV_LINK_LAYER_INFINIBAND) {
    port->gidIndex = 0;
  } else {
    std::vector<GidEntry> table;
    for (int i = 0; i < attr.gid_tbl_len; ++i) {
      GidEntry entry{};
      if (verbs.queryGid(port->context, portNumber, i, &entry.gid) != 0) break;
      entry.type = verbs.gidType(port->context, portNumber, i);
      table.push_back(entry);
    }
    const int family = settings.addrFamily == "AF_INET6" ? AF_INET6 : AF_INET;
    port->gidIndex = chooseGid(table, settings.rocVersion, family);
    if (port->gidIndex < 0) {
      return invalidUsage("verbs: " + name + " has no RoCE v" +
                          std::to_string(settings.rocVersion) +
                          " GID; set BRAID_IB_GID_INDEX or BRAID_IB_ROCE_VERSION_NUM");
    }
  }
  if (int rc = verbs.queryGid(port->context, portNumber, port->gidIndex, &port->gid); rc != 0) {
    return invalidUsage("verbs: " + name + " has no GID at index " +
                        std::to_string(port->gidIndex) + " (BRAID_IB_GID_INDEX)");
  }
  port->pd = verbs.allocPd(port->context);
  if (port->pd == nullptr) {
    return systemError("verbs: protection domain on " + name + ": " + std::strerror(errno));
  }
  port->cq = verbs.createCq(port->context, std::min(kInitialCqEntries, deviceAttr.max_cqe));
  if (port->cq == nullptr) {
    return systemError("verbs: completion queue on " + name + ": " + std::strerror(errno));
  }
  return Status::success();
}

}  // namespace

IbPort::~IbPort() {
  if (cq != nullptr) verbs_.destroyCq(cq);
  if (pd != nullptr) verbs_.deallocPd(pd);
  if (context != nullptr) verbs_.closeDevice(context);
}

int chooseGid(const std::vector<GidEntry>& table, int rocVersion, int family) {
  const GidType wanted = rocVersion == 1 ? GidType::kRoceV1 : GidType::kRoceV2;
  int sameVersion = -1;
  for (size_t i = 0; i < table.size(); ++i) {
    const GidEntry& e = table[i];
    if (e.type != wanted || isZero(e.gid)) continue;
    if (sameVersion < 0) sameVersion = static_cast<int>(i);
    const bool familyMatches =
        family == AF_INET ? isV4Mapped(e.gid) : !isV4Mapped(e.gid) && !isLinkLocal(e.gid);
    if (familyMatches) return static_cast<int>(i);
  }
  return sameVersion;
}

std::string gidToString(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.raw, text, sizeof(text));
  return text;
}

namespace {

struct ActivePort {
  uint8_t number;
  ibv_port_attr attr;
};

// The ports of `device` that are up and that `filter` allows, read through a context of their
// own, closed again.
std::vector<ActivePort> activePorts(const VerbsApi& verbs, ibv_device* device,
                                    const std::string& name, const HcaFilter& filter) {
  std::vector<ActivePort> active;
  ibv_context* probe = verbs.openDevice(device);
  if (probe == nullptr) return active;
  ibv_device_attr deviceAttr{};
  const int ports = verbs.queryDevice(probe, &deviceAttr) == 0 ? deviceAttr.phys_port_cnt : 0;
  for (int p = 1; p <= ports; ++p) {
    ibv_port_attr attr{};
    if (verbs.queryPort(probe, static_cast<uint8_t>(p), &attr) != 0) continue;
    if (attr.state != IBV_PORT_ACTIVE || !filter.allows(name, p)) continue;
    active.push_back({static_cast<uint8_t>(p), attr});
  }
  verbs.closeDevice(probe);
  return active;
}

}  // namespace

Result<std::vector<topology::VerbsPort>> describePorts(const VerbsApi& verbs,
                                                       const IbSettings& settings) {
  std::vector<topology::VerbsPort> described;
  int count = 0;
  ibv_device** list = verbs.getDeviceList(&count);
  if (list == nullptr) return described;
  const HcaFilter filter(settings.hca);
  for (int d = 0; d < count; ++d) {
    const std::string device = verbs.getDeviceName(list[d]);
    for (const ActivePort& active : activePorts(verbs, list[d], device, filter)) {
      topology::VerbsPort port;
      port.device = device;
      port.port = active.number;
      port.speedGbps = topology::ibLaneRateGbps(active.attr.active_speed) *
                       topology::ibLaneCount(active.attr.active_width);
      port.linkLayer = topology::ibLinkLayerName(active.attr.link_layer);
      described.push_back(std::move(port));
    }
  }
  verbs.freeDeviceList(list);
  return described;
}

Result<std::vector<std::unique_ptr<IbPort>>> openPorts(const VerbsApi& verbs,
                                                       const IbSettings& settings) {
  std::vector<std::unique_ptr<IbPort>> ports;
  int count = 0;
  ibv_device** list = verbs.getDeviceList(&count);
  if (list == nullptr) return ports;
  const HcaFilter filter(settings.hca);
  Status status;
  for (int d = 0; d < count && status.ok(); ++d) {
    const std::string device = verbs.getDeviceName(list[d]);
    // Only the ports the filter allows and that are up get a context for the transport.
    for (const ActivePort& active : activePorts(verbs, list[d], device, filter)) {
      const uint8_t p = active.number;
      auto port = std::make_unique<IbPort>(verbs, device + ":" + std::to_string(p));
      status = openPort(verbs, settings, list[d], p, port.get());
      if (!status.ok()) break;
      BRAID_INFO("verbs: using %s (%s), GID %d %s", port->name().c_str(),
                 port->linkLayer == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "RoCE",
                 port->gidIndex, gidToString(port->gid).c_str());
      ports.push_back(std::move(port));
    }
  }
  verbs.freeDeviceList(list);
  if (!status.ok()) return status;
  return ports;
}

}  // namespace braid::transport::ib
