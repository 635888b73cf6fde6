// Which verbs ports the transport can use: see port_survey.h.
#include "transport/net/ib/port_survey.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/log.h"
#include "transport/net/ib/hca_filter.h"
#include "transport/net/ib/ib_device.h"

namespace braid::transport::ib {
namespace {

/// Amazon's PCI vendor id, which EFA devices report in ibv_device_attr.vendor_id.
constexpr uint32_t kAmazonVendorId = 0x1d0f;

const char* nodeTypeName(int type) {
  switch (type) {
    case IBV_NODE_CA:
      return "CA";
    case IBV_NODE_SWITCH:
      return "switch";
    case IBV_NODE_ROUTER:
      return "router";
    case IBV_NODE_RNIC:
      return "RNIC";
    case IBV_NODE_USNIC:
      return "usNIC";
    case IBV_NODE_USNIC_UDP:
      return "usNIC UDP";
    case IBV_NODE_UNSPECIFIED:
      return "unspecified";
    default:
      return "unknown";
  }
}

const char* transportName(int type) {
  switch (type) {
    case IBV_TRANSPORT_IB:
      return "IB";
    case IBV_TRANSPORT_IWARP:
      return "iWARP";
    case IBV_TRANSPORT_USNIC:
      return "usNIC";
    case IBV_TRANSPORT_USNIC_UDP:
      return "usNIC UDP";
    case IBV_TRANSPORT_UNSPECIFIED:
      return "unspecified";
    default:
      return "unknown";
  }
}

const char* portStateName(int state) {
  switch (state) {
    case IBV_PORT_NOP:
      return "NOP";
    case IBV_PORT_DOWN:
      return "DOWN";
    case IBV_PORT_INIT:
      return "INIT";
    case IBV_PORT_ARMED:
      return "ARMED";
    case IBV_PORT_ACTIVE:
      return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
      return "ACTIVE_DEFER";
    default:
      return "unknown";
  }
}

/// Why `port` of an opened device has no GID its queue pairs can use; empty where it has one,
/// then in *gidIndex.
std::string whyNoGid(const VerbsApi& verbs, ibv_context* context, uint8_t port,
                     const ibv_port_attr& attr, const IbSettings& settings, int* gidIndex) {
  if (attr.gid_tbl_len <= 0) return "its GID table is empty";
  if (settings.gidIndex >= 0) {
    ibv_gid gid{};
    if (settings.gidIndex >= attr.gid_tbl_len ||
        verbs.queryGid(context, port, settings.gidIndex, &gid) != 0) {
      return "no GID at index " + std::to_string(settings.gidIndex) + " (BRAID_IB_GID_INDEX; " +
             std::to_string(attr.gid_tbl_len) + " entries)";
    }
    *gidIndex = settings.gidIndex;
    return "";
  }
  if (attr.link_layer == IBV_LINK_LAYER_INFINIBAND) {
    *gidIndex = 0;
    return "";
  }
  std::vector<GidEntry> table;
  for (int i = 0; i < attr.gid_tbl_len; ++i) {
    GidEntry entry{};
    if (verbs.queryGid(context, port, i, &entry.gid) != 0) break;
    entry.type = verbs.gidType(context, port, i);
    table.push_back(entry);
  }
  const int family = settings.addrFamily == "AF_INET6" ? AF_INET6 : AF_INET;
  *gidIndex = chooseGid(table, settings.rocVersion, family);
  if (*gidIndex >= 0) return "";
  return "no RoCE v" + std::to_string(settings.rocVersion) + " GID among its " +
         std::to_string(table.size()) +
         " (set BRAID_IB_GID_INDEX or BRAID_IB_ROCE_VERSION_NUM to use another)";
}

/// Why `port` of an opened device cannot be used; empty where it can, then filled in *usable.
std::string whyNotPort(const VerbsApi& verbs, ibv_context* context, uint8_t port,
                       const IbSettings& settings, UsablePort* usable) {
  ibv_port_attr& attr = usable->attr;
  if (int rc = verbs.queryPort(context, port, &attr); rc != 0) {
    return std::string("ibv_query_port failed: ") + std::strerror(rc);
  }
  if (attr.state != IBV_PORT_ACTIVE) {
    return std::string("port ") + portStateName(attr.state) + ", not ACTIVE";
  }
  if (attr.link_layer != IBV_LINK_LAYER_INFINIBAND && attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
    return "link layer unspecified: neither InfiniBand nor Ethernet (RoCE)";
  }
  return whyNoGid(verbs, context, port, attr, settings, &usable->gidIndex);
}

/// Surveys the ports of one device, opened as `context`.
void surveyDevice(const VerbsApi& verbs, ibv_device* device, const std::string& name,
                  ibv_context* context, const HcaFilter& filter, const IbSettings& settings,
                  PortSurvey* survey) {
  ibv_device_attr deviceAttr{};
  if (int rc = verbs.queryDevice(context, &deviceAttr); rc != 0) {
    survey->skipped.push_back({name, std::string("ibv_query_device failed: ") + std::strerror(rc)});
    return;
  }
  const std::string notRc =
      whyNotRcDevice(device->node_type, device->transport_type, deviceAttr.vendor_id);
  if (!notRc.empty()) {
    survey->skipped.push_back({name, notRc});
    return;
  }
  for (int p = 1; p <= deviceAttr.phys_port_cnt; ++p) {
    const std::string portName = name + ":" + std::to_string(p);
    if (!filter.allows(name, p)) {
      survey->skipped.push_back({portName, "left out by BRAID_IB_HCA=" + settings.hca});
      continue;
    }
    UsablePort usable;
    usable.device = device;
    usable.deviceName = name;
    usable.number = static_cast<uint8_t>(p);
    const std::string why = whyNotPort(verbs, context, usable.number, settings, &usable);
    if (why.empty()) {
      survey->usable.push_back(usable);
    } else {
      survey->skipped.push_back({portName, why});
    }
  }
}

}  // namespace

std::string whyNotRcDevice(int nodeType, int transportType, uint32_t vendorId) {
  if (nodeType == IBV_NODE_CA && transportType == IBV_TRANSPORT_IB) return "";
  char vendor[16];
  snprintf(vendor, sizeof(vendor), "0x%04x", vendorId);
  std::string why = std::string("not an InfiniBand or RoCE device (node type ") +
                    nodeTypeName(nodeType) + ", transport " + transportName(transportType) +
                    ", vendor " + vendor + ")";
  if (vendorId == kAmazonVendorId) {
    return why +
           ": an AWS EFA device, which makes no RC queue pairs (NCCL reaches EFA through "
           "the aws-ofi-nccl network plugin)";
  }
  if (transportType == IBV_TRANSPORT_IWARP) {
    return why + ": iWARP has no RDMA write with immediate, which the transport needs";
  }
  return why + ": the transport needs RC queue pairs of an InfiniBand or RoCE HCA";
}

PortSurvey surveyPorts(const VerbsApi& verbs, ibv_device** list, int count,
                       const IbSettings& settings) {
  PortSurvey survey;
  const HcaFilter filter(settings.hca);
  for (int d = 0; d < count; ++d) {
    const std::string name = verbs.getDeviceName(list[d]);
    if (!filter.allowsSomePort(name)) {
      survey.skipped.push_back({name, "left out by BRAID_IB_HCA=" + settings.hca});
      continue;
    }
    ibv_context* context = verbs.openDevice(list[d]);
    if (context == nullptr) {
      survey.skipped.push_back({name, std::string("cannot be opened: ") + std::strerror(errno)});
      continue;
    }
    surveyDevice(verbs, list[d], name, context, filter, settings, &survey);
    verbs.closeDevice(context);
  }
  return survey;
}

std::string PortSurvey::skippedText() const {
  std::string text;
  for (const SkippedPort& s : skipped) text += (text.empty() ? "" : "; ") + s.name + ": " + s.why;
  return text;
}

void PortSurvey::logSkipped() const {
  for (const SkippedPort& s : skipped) {
    BRAID_INFO("verbs: skipping %s: %s", s.name.c_str(), s.why.c_str());
  }
}

}  // namespace braid::transport::ib
