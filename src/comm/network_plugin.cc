// Network (network.h): the part that chooses a network plugin (transport/net/plugin) and links
// FIFO ends to it.
//
// NCCL tries its plugins before its own IB and sockets, and braid does the same: unless
// NCCL_NET names IB or Socket, each rank loads what NCCL_NET_PLUGIN asks for. Both ends of a FIFO
// must run the same transport, so the plugin carries the FIFOs only where every rank loaded one
// of the same name; otherwise the built-in transports do, as when none loads. NCCL_NET naming a
// plugin that some rank lacks is an error, as in NCCL.
#include <strings.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "base/log.h"
#include "comm/network.h"
#include "topology/net_devices.h"

namespace braid::comm {
namespace {

// A rank's plugin as the ranks trade it: its name (empty where it has none), and the device
// its FIFOs use, with that device's speed and latency as the plugin reports them.
struct PluginName {
  char name[64] = {};
  int32_t dev = -1;
  int32_t speedMbps = 0;
  float latencyUs = 0;
};

struct NetworkShare {
  double gbs = 0;
  double latencyUs = 0;
};

// What each rank's device moves, shared among the ranks of its host on it, at the slowest rank
// (GB/s), and the largest latency reported; zeros where some device's speed is unknown.
NetworkShare shareOfDevices(const Members& members, const std::vector<PluginName>& names) {
  double slowest = 0;
  double latency = 0;
  for (int r = 0; r < members.nranks; ++r) {
    // The ranks of r's host whose FIFOs go through r's device share its speed.
    int sharing = 0;
    for (int other = 0; other < members.nranks; ++other) {
      sharing += !members.onOtherHostThan(r, other) && names[other].dev == names[r].dev ? 1 : 0;
    }
    const double share = names[r].speedMbps / 8000.0 / sharing;  // Mbit/s to GB/s
    if (!(share > 0)) return {};  // a device of unknown speed: the plan's figures stand
    slowest = r == 0 ? share : std::min(slowest, share);
    latency = std::max(latency, static_cast<double>(names[r].latencyUs));
  }
  return {slowest, latency};
}

bool builtIn(const std::string& net) {
  return strcasecmp(net.c_str(), "IB") == 0 || strcasecmp(net.c_str(), "Socket") == 0;
}

}  // namespace

Status Network::choosePlugin() {
  const bool namesPlugin = !config_.net.empty() && !builtIn(config_.net);
  if (!config_.net.empty() && !namesPlugin) {
    BRAID_INFO("network: NCCL_NET=%s, no network plugin tried", config_.net.c_str());
    return Status::success();
  }
  BRAID_ASSIGN_OR_RETURN(plugin_, transport::plugin::loadNetPlugin(config_.netPlugin, config_.net));
  std::vector<PluginName> names(members_.nranks);
  if (plugin_) {
    pluginDev_ = choosePluginDevice(&pluginGpuPath_);
    PluginName& mine = names[members_.rank];
    snprintf(mine.name, sizeof(mine.name), "%s", plugin_->net().name().c_str());
    const transport::plugin::DeviceProps& props = plugin_->devices()[pluginDev_];
    mine.dev = pluginDev_;
    mine.speedMbps = props.speedMbps;
    mine.latencyUs = props.latencyUs;
  }
  BRAID_TRY(members_.bootstrap()
                ->allGather(names.data(), sizeof(PluginName))
                .withContext("exchanging which ranks loaded a network plugin"));
  for (int r = 0; r < members_.nranks; ++r) {
    names[r].name[sizeof(names[r].name) - 1] = '\0';
    if (strcmp(names[r].name, names[members_.rank].name) == 0) continue;
    const std::string theirs = names[r].name[0] != '\0' ? names[r].name : "none";
    if (namesPlugin) {
      return invalidUsage("NCCL_NET=" + config_.net + ": rank " + std::to_string(r) +
                          " has network plugin " + theirs + ", this rank " +
                          (plugin_ ? plugin_->describe() : std::string("none")) +
                          " (NCCL_NET_PLUGIN must load the same plugin on every rank)");
    }
    BRAID_INFO(
        "network: rank %d has network plugin %s, this rank %s: using the internal "
        "network",
        r, theirs.c_str(), plugin_ ? plugin_->describe().c_str() : "none");
    plugin_.reset();
    return Status::success();
  }
  if (!plugin_) {
    if (namesPlugin) {
      return invalidUsage("NCCL_NET=" + config_.net +
                          ": no network plugin of that name loaded (NCCL_NET_PLUGIN=" +
                          config_.netPlugin.value_or("unset") + "); see the INFO log");
    }
    BRAID_INFO("network: no network plugin loaded; using the internal network");
    return Status::success();
  }
  BRAID_INFO("network: NET plugin %s on %zu device(s), rank %d on device %d",
             plugin_->describe().c_str(), plugin_->devices().size(), members_.rank, pluginDev_);
  const NetworkShare share = shareOfDevices(members_, names);
  pluginNetworkGBs_ = share.gbs;
  pluginLatencyUs_ = share.latencyUs;
  return Status::success();
}

int Network::choosePluginDevice(std::optional<topology::PathType>* gpuPath) const {
  const std::vector<transport::plugin::DeviceProps>& devices = plugin_->devices();
  std::vector<std::string> busIds;
  for (const auto& props : devices) busIds.push_back(topology::busIdOfPciPath(props.pciPath));
  const int nearest = members_.nearestNetDevice(busIds, gpuPath);
  if (nearest >= 0) {
    BRAID_INFO("network: NET plugin device %d (%s, %s) is the nearest to this rank's %s", nearest,
               devices[nearest].name.c_str(), busIds[nearest].c_str(),
               members_.cudaDevice >= 0 ? "GPU" : "CPU");
    return nearest;
  }
  BRAID_INFO(
      "network: none of the NET plugin's devices is on this host's topology (by the PCI path "
      "they report); the host's ranks go round them");
  return members_.localRank() % static_cast<int>(devices.size());
}

transport::plugin::PluginLink Network::pluginLink(int peer, int channel) const {
  transport::plugin::PluginLink link;
  link.plugin = plugin_;
  link.dev = pluginDev_;
  link.peer = peer;
  link.timeoutMs = config_.timeoutMs;
  link.watch = linkWatch(channel);
  return link;
}

}  // namespace braid::comm
