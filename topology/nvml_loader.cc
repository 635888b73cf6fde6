#include "topology/nvml_loader.h"

#include <cstring>
#include <string>
#include <vector>

#include "topology/dynamic_library.h"
#include "topology/pci_bus_id.h"

namespace braid::topology {
namespace {

// The NVML types and values used here, from the NVML API reference; NVML's
// header is not needed to build braid.
using NvmlReturn = int;  // nvmlReturn_t
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr unsigned kNvmlFeatureEnabled = 1;  // nvmlEnableState_t
// nvmlIntNvLinkDeviceType_t
constexpr unsigned kNvLinkDeviceGpu = 0;
constexpr unsigned kNvLinkDeviceSwitch = 2;
// NVML_NVLINK_MAX_LINKS: 12 up to Ampere's drivers, 18 since Hopper. Asking
// about a link a GPU lacks is simply an error, so the larger bound serves all.
constexpr unsigned kMaxNvLinks = 18;

struct NvmlDevice;  // nvmlDevice_t points to it

/// nvmlPciInfo_t.
struct NvmlPciInfo {
  char busIdLegacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;
  unsigned pciSubSystemId;
  char busId[32];
};

struct NvmlApi {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*deviceCount)(unsigned*) = nullptr;
  NvmlReturn (*deviceByIndex)(unsigned, NvmlDevice**) = nullptr;
  NvmlReturn (*pciInfo)(NvmlDevice*, NvmlPciInfo*) = nullptr;
  NvmlReturn (*computeCapability)(NvmlDevice*, int*, int*) = nullptr;
  NvmlReturn (*linkState)(NvmlDevice*, unsigned, unsigned*) = nullptr;
  NvmlReturn (*remotePciInfo)(NvmlDevice*, unsigned, NvmlPciInfo*) = nullptr;
  // Older drivers (R450) lack it; see remoteType().
  NvmlReturn (*remoteDeviceType)(NvmlDevice*, unsigned, unsigned*) = nullptr;
};

Status resolveApi(const DynamicLibrary& library, NvmlApi* api) {
  BRAID_TRY(library.resolve("nvmlInit_v2", &api->init));
  BRAID_TRY(library.resolve("nvmlShutdown", &api->shutdown));
  BRAID_TRY(library.resolve("nvmlDeviceGetCount_v2", &api->deviceCount));
  BRAID_TRY(library.resolve("nvmlDeviceGetHandleByIndex_v2", &api->deviceByIndex));
  BRAID_TRY(library.resolve("nvmlDeviceGetPciInfo_v3", &api->pciInfo));
  BRAID_TRY(library.resolve("nvmlDeviceGetCudaComputeCapability", &api->computeCapability));
  BRAID_TRY(library.resolve("nvmlDeviceGetNvLinkState", &api->linkState));
  BRAID_TRY(library.resolve("nvmlDeviceGetNvLinkRemotePciInfo_v2", &api->remotePciInfo));
  if (!library.resolve("nvmlDeviceGetNvLinkRemoteDeviceType", &api->remoteDeviceType).ok()) {
    api->remoteDeviceType = nullptr;
  }
  return Status::success();
}

/// The normalised bus id in an NVML PCI record, or empty.
std::string busIdOf(const NvmlPciInfo& info) {
  char text[sizeof(info.busId) + 1] = {};
  memcpy(text, info.busId, sizeof(info.busId));
  auto id = normalizePciBusId(text);
  return id.ok() ? id.value() : std::string();
}

/// Adds one active link to `gpu`, counting links per remote device.
void countLink(GpuNvLinks* gpu, const std::string& remoteBusId, NvLinkPeerType type) {
  for (NvLinkPeer& peer : gpu->peers) {
    if (peer.busId == remoteBusId) {
      ++peer.links;
      return;
    }
  }
  gpu->peers.push_back(NvLinkPeer{remoteBusId, type, 1});
}

/// What is at the far end of `link`. NVML says so; with older
/// drivers (R450), or when the call fails, a remote end that is one of NVML's GPUs
/// is a GPU and anything else an NVSwitch (the only other NVLink peer of
/// x86 machines).
NvLinkPeerType remoteType(const NvmlApi& api, NvmlDevice* device, unsigned link,
                          const std::string& remoteBusId,
                          const std::vector<std::string>& gpuBusIds) {
  unsigned type = 0;
  if (api.remoteDeviceType != nullptr &&
      api.remoteDeviceType(device, link, &type) == kNvmlSuccess) {
    if (type == kNvLinkDeviceGpu) return NvLinkPeerType::kGpu;
    if (type == kNvLinkDeviceSwitch) return NvLinkPeerType::kNvSwitch;
    return NvLinkPeerType::kOther;
  }
  for (const std::string& gpu : gpuBusIds) {
    if (gpu == remoteBusId) return NvLinkPeerType::kGpu;
  }
  return NvLinkPeerType::kNvSwitch;
}

/// The active links of one GPU, grouped by remote device.
GpuNvLinks readGpu(const NvmlApi& api, NvmlDevice* device, const std::string& busId,
                   const std::vector<std::string>& gpuBusIds, std::string* note) {
  GpuNvLinks gpu;
  gpu.busId = busId;
  int major = 0, minor = 0;
  if (api.computeCapability(device, &major, &minor) == kNvmlSuccess) {
    gpu.smVersion = major * 10 + minor;
  }
  for (unsigned link = 0; link < kMaxNvLinks; ++link) {
    unsigned active = 0;
    if (api.linkState(device, link, &active) != kNvmlSuccess || active != kNvmlFeatureEnabled) {
      continue;
    }
    NvmlPciInfo remote;
    memset(&remote, 0, sizeof(remote));
    std::string remoteBusId;
    if (api.remotePciInfo(device, link, &remote) == kNvmlSuccess) remoteBusId = busIdOf(remote);
    if (remoteBusId.empty()) {
      *note += "GPU " + busId + " link " + std::to_string(link) + ": no remote PCI info; ";
      continue;
    }
    countLink(&gpu, remoteBusId, remoteType(api, device, link, remoteBusId, gpuBusIds));
  }
  return gpu;
}

}  // namespace

NvmlReport queryNvLinks() {
  NvmlReport report;
  auto library = DynamicLibrary::open("libnvidia-ml.so.1");
  if (!library.ok()) {
    report.note = library.status().message();
    return report;
  }
  NvmlApi api;
  Status resolved = resolveApi(library.value(), &api);
  if (!resolved.ok()) {
    report.note = resolved.message();
    return report;
  }
  NvmlReturn initialised = api.init();
  if (initialised != kNvmlSuccess) {
    report.note = "nvmlInit_v2 failed with NVML error " + std::to_string(initialised);
    return report;
  }
  report.loaded = true;
  unsigned count = 0;
  if (api.deviceCount(&count) != kNvmlSuccess) count = 0;
  // Every GPU's bus id first: telling a GPU peer from an NVSwitch may need them all.
  std::vector<NvmlDevice*> devices;
  std::vector<std::string> busIds;
  for (unsigned index = 0; index < count; ++index) {
    NvmlDevice* device = nullptr;
    NvmlPciInfo pci;
    memset(&pci, 0, sizeof(pci));
    std::string busId;
    if (api.deviceByIndex(index, &device) == kNvmlSuccess &&
        api.pciInfo(device, &pci) == kNvmlSuccess) {
      busId = busIdOf(pci);
    }
    if (busId.empty()) {
      report.note += "NVML device " + std::to_string(index) + " cannot be read; ";
      continue;
    }
    devices.push_back(device);
    busIds.push_back(busId);
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    report.gpus.push_back(readGpu(api, devices[i], busIds[i], busIds, &report.note));
  }
  api.shutdown();
  return report;
}

}  // namespace braid::topology
