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

namespace braid::comm {
namespace {

// A rank's plugin as the ranks trade it: its name, empty where it has none.
struct PluginName {
  char name[64] = {};
};

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
    snprintf(names[members_.rank].name, sizeof(names[0].name), "%s", plugin_->net().name().c_str());
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
             plugin_->describe().c_str(), plugin_->devices().size(), members_.rank,
             pluginLink(0).dev);
  return Status::success();
}

transport::plugin::PluginLink Network::pluginLink(int peer) const {
  transport::plugin::PluginLink link;
  link.plugin = plugin_;
  // The ranks of a host spread over its devices, as over its verbs ports.
  link.dev = members_.localRank() % static_cast<int>(plugin_->devices().size());
  link.peer = peer;
  link.timeoutMs = config_.timeoutMs;
  link.watch = linkWatch();
  return link;
}

}  // namespace braid::comm
