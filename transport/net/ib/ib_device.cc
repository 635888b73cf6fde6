#include "transport/net/ib/ib_device.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "transport/net/ib/port_survey.h"

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

// Opens `usable` (a port the survey passed) for the transport: its own context, protection
// domain and completion queue.
Status openPort(const VerbsApi& verbs, const UsablePort& usable, IbPort* port) {
  const std::string name = port->name();
  port->context = verbs.openDevice(usable.device);
  if (port->context == nullptr) {
    return systemError("verbs: opening " + name + ": " + std::strerror(errno));
  }
  ibv_device_attr deviceAttr{};
  if (int rc = verbs.queryDevice(port->context, &deviceAttr); rc != 0) {
    return systemError("verbs: querying " + name + ": " + std::strerror(rc));
  }
  port->maxQpWr = deviceAttr.max_qp_wr;
  port->completions.setLimit(deviceAttr.max_cqe);
  port->port = usable.number;
  port->linkLayer = usable.attr.link_layer;
  port->activeMtu = usable.attr.active_mtu;
  port->lid = usable.attr.lid;
  port->gidIndex = usable.gidIndex;
  if (int rc = verbs.queryGid(port->context, port->port, port->gidIndex, &port->gid); rc != 0) {
    return systemError("verbs: reading GID " + std::to_string(port->gidIndex) + " of " + name +
                       ": " + std::strerror(rc));
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

/// ibv_get_device_list's list, freed when it goes; the survey's ports point into it.
class DeviceList {
 public:
  explicit DeviceList(const VerbsApi& verbs) : verbs_(verbs), list_(verbs.getDeviceList(&count_)) {}
  ~DeviceList() {
    if (list_ != nullptr) verbs_.freeDeviceList(list_);
  }
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;

  PortSurvey survey(const IbSettings& settings) const {
    return list_ == nullptr ? PortSurvey{} : surveyPorts(verbs_, list_, count_, settings);
  }

 private:
  const VerbsApi& verbs_;
  int count_ = 0;
  ibv_device** list_;
};

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

Result<std::vector<topology::VerbsPort>> describePorts(const VerbsApi& verbs,
                                                       const IbSettings& settings) {
  std::vector<topology::VerbsPort> described;
  const DeviceList devices(verbs);
  const PortSurvey survey = devices.survey(settings);
  for (const UsablePort& usable : survey.usable) {
    topology::VerbsPort port;
    port.device = usable.deviceName;
    port.port = usable.number;
    port.speedGbps = topology::ibLaneRateGbps(usable.attr.active_speed) *
                     topology::ibLaneCount(usable.attr.active_width);
    port.linkLayer = topology::ibLinkLayerName(usable.attr.link_layer);
    described.push_back(std::move(port));
  }
  return described;
}

Result<std::vector<std::unique_ptr<IbPort>>> openPorts(const VerbsApi& verbs,
                                                       const IbSettings& settings,
                                                       std::string* whyNone) {
  std::vector<std::unique_ptr<IbPort>> ports;
  const DeviceList devices(verbs);
  const PortSurvey survey = devices.survey(settings);
  // Devices and ports that cannot carry the transport's traffic are no error: one line each.
  survey.logSkipped();
  Status status;
  for (const UsablePort& usable : survey.usable) {
    auto port = std::make_unique<IbPort>(
        verbs, usable.deviceName + ":" + std::to_string(static_cast<int>(usable.number)));
    status = openPort(verbs, usable, port.get());
    if (!status.ok()) break;
    BRAID_INFO("verbs: using %s (%s), GID %d %s", port->name().c_str(),
               port->linkLayer == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "RoCE", port->gidIndex,
               gidToString(port->gid).c_str());
    ports.push_back(std::move(port));
  }
  if (!status.ok()) return status;
  if (ports.empty() && whyNone != nullptr) {
    *whyNone = survey.skipped.empty()
                   ? "no InfiniBand or RoCE device"
                   : "no usable InfiniBand or RoCE port (" + survey.skippedText() + ")";
  }
  return ports;
}

}  // namespace braid::transport::ib
