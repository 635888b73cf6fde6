// openTuner (tuner.h): what a tuner's init is told, from the communicator's parts.
#include "comm/tuner.h"

#include <algorithm>
#include <map>

#include "tune/plugin/tuner_loader.h"

namespace braid::comm {
namespace {

// NCCL's NVLink domains are its nodes: braid's hosts, with their fewest and most ranks.
tunerabi::ncclNvlDomainInfo_v5_t nvlDomains(const Members& members) {
  std::map<int, int> ranksOfHost;
  for (int host : members.hostNumbers()) ++ranksOfHost[host];
  tunerabi::ncclNvlDomainInfo_v5_t info{};
  info.nNvlDomains = static_cast<int>(ranksOfHost.size());
  info.minRanksPerNvlDomain = members.nranks;
  for (const auto& [host, ranks] : ranksOfHost) {
    info.minRanksPerNvlDomain = std::min(info.minRanksPerNvlDomain, ranks);
    info.maxRanksPerNvlDomain = std::max(info.maxRanksPerNvlDomain, ranks);
  }
  return info;
}

}  // namespace

std::unique_ptr<tune::TunerSession> openTuner(const Config& config, const Members& members,
                                              const Network& network, const tune::Model& model) {
  const transport::plugin::LoadedNetPlugin* net = network.plugin();
  std::shared_ptr<tune::LoadedTuner> loaded =
      tune::acquireTuner(config.tunerPlugin, net != nullptr ? net->net().path() : "");
  if (!loaded) return nullptr;
  tune::TunerInit init;
  init.commId = members.peers()[0].nonce;  // rank 0's: the same on every rank
  init.nranks = static_cast<size_t>(members.nranks);
  init.nnodes = static_cast<size_t>(members.hostCount());
  init.nvlDomains = nvlDomains(members);
  init.constants = tune::modelConstants(model);
  tune::TunerPlugin& plugin = loaded->plugin();
  return tune::TunerSession::open(std::move(loaded), plugin, init);
}

}  // namespace braid::comm
