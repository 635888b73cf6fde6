#include "topology/verbs_nics.h"

#include <cstring>

#include "topology/libibverbs.h"
#include "topology/pci_bus_id.h"
#include "topology/verbs_abi.h"

namespace braid::topology {
namespace {

namespace abi = verbs_abi;

struct VerbsApi {
  abi::GetDeviceListFn getDeviceList = nullptr;
  abi::FreeDeviceListFn freeDeviceList = nullptr;
  abi::GetDeviceNameFn getDeviceName = nullptr;
  abi::OpenDeviceFn openDevice = nullptr;
  abi::CloseDeviceFn closeDevice = nullptr;
  abi::QueryDeviceFn queryDevice = nullptr;
  abi::QueryPortFn queryPort = nullptr;
};

Status resolveApi(const DynamicLibrary& library, VerbsApi* api) {
  BRAID_TRY(library.resolve("ibv_get_device_list", &api->getDeviceList));
  BRAID_TRY(library.resolve("ibv_free_device_list", &api->freeDeviceList));
  BRAID_TRY(library.resolve("ibv_get_device_name", &api->getDeviceName));
  BRAID_TRY(library.resolve("ibv_open_device", &api->openDevice));
  BRAID_TRY(library.resolve("ibv_close_device", &api->closeDevice));
  BRAID_TRY(library.resolve("ibv_query_device", &api->queryDevice));
  // The exported ibv_query_port is the compatibility entry point that
  // verbs.h's inline wrapper falls back to; it fills the fields read here.
  BRAID_TRY(library.resolve("ibv_query_port", &api->queryPort));
  return Status::success();
}

/// Appends the active ports of one opened device to report->ports.
void appendActivePorts(const VerbsApi& api, abi::Context* context, const std::string& name,
                       const std::string& busId, int numaNode, VerbsReport* report) {
  abi::DeviceAttr deviceAttr;
  memset(&deviceAttr, 0, sizeof(deviceAttr));
  if (api.queryDevice(context, &deviceAttr) != 0) {
    report->note += "ibv_query_device failed on " + name + "; ";
    return;
  }
  for (int port = 1; port <= deviceAttr.physPortCount; ++port) {
    // Room past the struct: a newer provider may write fields this layout lacks.
    struct {
      abi::PortAttr attr;
      char spare[64];
    } query;
    memset(&query, 0, sizeof(query));
    if (api.queryPort(context, static_cast<uint8_t>(port), &query.attr) != 0) {
      report->note += "ibv_query_port failed on " + name + " port " + std::to_string(port) + "; ";
      continue;
    }
    if (query.attr.state != abi::kPortActive) continue;
    // A port of no link layer is no InfiniBand or RoCE NIC (AWS's EFA: it makes no RC queue
    // pairs, transport/net/ib/port_survey.h), so rings are not planned on it.
    if (query.attr.linkLayer != abi::kLinkLayerInfiniband &&
        query.attr.linkLayer != abi::kLinkLayerEthernet) {
      report->note += name + " port " + std::to_string(port) + " has no link layer (not RDMA); ";
      continue;
    }
    unsigned speedCode =
        query.attr.activeSpeedEx ? query.attr.activeSpeedEx : query.attr.activeSpeed;
    VerbsPort entry;
    entry.device = name;
    entry.port = port;
    entry.busId = busId;
    entry.numaNode = numaNode;
    entry.speedGbps = ibLaneRateGbps(speedCode) * ibLaneCount(query.attr.activeWidth);
    entry.linkLayer = ibLinkLayerName(query.attr.linkLayer);
    report->ports.push_back(std::move(entry));
  }
}

}  // namespace

double ibLaneRateGbps(unsigned activeSpeed) {
  // ibv_port_attr's speed codes and the nominal data rate of one lane.
  static constexpr struct {
    unsigned code;
    double gbps;
  } kRates[] = {{1, 2.5} /* SDR */,    {2, 5.0} /* DDR */,     {4, 10.0} /* QDR */,
                {8, 10.0} /* FDR10 */, {16, 14.0} /* FDR */,   {32, 25.0} /* EDR */,
                {64, 50.0} /* HDR */,  {128, 100.0} /* NDR */, {256, 200.0} /* XDR */};
  for (const auto& rate : kRates) {
    if (rate.code == activeSpeed) return rate.gbps;
  }
  return 0.0;
}

int ibLaneCount(unsigned activeWidth) {
  // ibv_port_attr's width codes: 1x, 4x, 8x, 12x, and 2x (added last).
  static constexpr struct {
    unsigned code;
    int lanes;
  } kWidths[] = {{1, 1}, {2, 4}, {4, 8}, {8, 12}, {16, 2}};
  for (const auto& width : kWidths) {
    if (width.code == activeWidth) return width.lanes;
  }
  return 0;
}

const char* ibLinkLayerName(unsigned linkLayer) {
  return linkLayer == abi::kLinkLayerEthernet ? "Ethernet" : "InfiniBand";
}

VerbsReport listVerbsPorts() {
  VerbsReport report;
  Result<const DynamicLibrary*> library = libibverbs();
  if (!library.ok()) {
    report.note = library.status().message();
    return report;
  }
  VerbsApi api;
  Status resolved = resolveApi(*library.value(), &api);
  if (!resolved.ok()) {
    report.note = resolved.message();
    return report;
  }
  report.loaded = true;

  int count = 0;
  abi::Device** devices = api.getDeviceList(&count);
  if (devices == nullptr) {
    report.note = "ibv_get_device_list found no RDMA devices";
    return report;
  }
  for (int i = 0; i < count; ++i) {
    const char* rawName = api.getDeviceName(devices[i]);
    std::string name = rawName ? rawName : "";
    if (name.empty()) continue;
    std::string busId =
        pciBusIdInSysfsPath(resolvedPath("/sys/class/infiniband/" + name + "/device"));
    int numaNode = busId.empty() ? -1 : pciNumaNode("/sys", busId);
    abi::Context* context = api.openDevice(devices[i]);
    if (context == nullptr) {
      report.note += "ibv_open_device failed on " + name + "; ";
      continue;
    }
    appendActivePorts(api, context, name, busId, numaNode, &report);
    api.closeDevice(context);
  }
  api.freeDeviceList(devices);
  return report;
}

}  // namespace braid::topology
