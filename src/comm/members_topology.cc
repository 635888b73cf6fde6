// Members' topology (members.h): the topology a communicator runs on: the machine (discovered with
// hwloc, or loaded from BRAID_TOPO_FILE), where each rank sits on it, and the transports, rings and
// trees the search derives (topology/plan.h).
//
// Discovery looks at the whole machine, so a process does it once and
// every communicator it makes reuses the result. Ranks of one host plan from
// their own view of it and all reach the same plan. A communicator that
// spans hosts first exchanges them: every rank sends its host's graph (in
// braid's XML) through the bootstrap, and every rank joins the graphs of the
// hosts in the order of their first ranks (topology::joinHosts, as
// braid-topo joins files), so all plan on the same cluster. What differs
// between ranks is where each runs: a rank pinned to one socket's cores says
// so in its PeerInfo (numaId), and the plan places it on that socket's CPU
// node of its host.
#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "base/interfaces.h"
#include "base/log.h"
#include "comm/members.h"
#include "topology/braid_xml.h"
#include "topology/cpu_affinity.h"
#include "topology/discover.h"
#include "topology/net_devices.h"
#include "topology/paths.h"
#include "topology/plan.h"
#include "topology/summary.h"
#include "topology/topology_file.h"
#include "transport/net/ib/ib_device.h"
#include "transport/net/ib/verbs_api.h"

namespace braid::comm {
namespace {

// This process's discovery, made by the first communicator that needs it.
Result<topology::Graph> discoveredOnce() {
  static std::once_flag once;
  static Result<topology::Graph> graph = internalError("topology not discovered");
  std::call_once(once, [] { graph = topology::obtainTopology("", ""); });
  return graph;
}

// Every rank's `text`, through the bootstrap: the lengths first, then the texts padded to the
// longest.
Result<std::vector<std::string>> allGatherText(bootstrap::Bootstrap& b, const std::string& text) {
  const int n = b.nranks();
  std::vector<uint64_t> lengths(n, 0);
  lengths[b.rank()] = text.size();
  BRAID_TRY(b.allGather(lengths.data(), sizeof(uint64_t)));
  uint64_t longest = 0;
  for (uint64_t l : lengths) longest = std::max(longest, l);
  std::vector<char> all(static_cast<size_t>(longest) * n, '\0');
  std::copy(text.begin(), text.end(), all.begin() + static_cast<size_t>(longest) * b.rank());
  BRAID_TRY(b.allGather(all.data(), longest));
  std::vector<std::string> texts(n);
  for (int r = 0; r < n; ++r) {
    texts[r].assign(all.data() + static_cast<size_t>(longest) * r, lengths[r]);
  }
  return texts;
}

}  // namespace

Status Members::exchangeTopology(const Config& config, std::vector<int>* hostOf) {
  // A rank whose discovery failed sends nothing. Discovery failing on one host alone would leave
  // the ranks with different plans, so then every rank drops its machine and keeps the ring
  // 0..N-1, as a rank alone does.
  BRAID_ASSIGN_OR_RETURN(
      std::vector<std::string> texts,
      allGatherText(*bootstrap_, machine_ ? topology::writeBraidXml(*machine_) : std::string()));
  for (const std::string& text : texts) {
    if (text.empty()) {
      machine_.reset();
      return Status::success();
    }
  }
  *hostOf = hostNumbers();
  std::vector<topology::Graph> hosts;
  for (int r = 0; r < nranks; ++r) {
    if ((*hostOf)[r] != static_cast<int>(hosts.size())) continue;  // not its host's first rank
    BRAID_ASSIGN_OR_RETURN(
        topology::Graph g,
        topology::parseTopology(texts[r], "rank " + std::to_string(r) + "'s topology"));
    hosts.push_back(std::move(g));
  }
  machine_ = topology::joinHosts(hosts);
  if (rank == 0 && !config.topoDumpFile.empty()) {
    BRAID_TRY(topology::writeTopologyFile(*machine_, config.topoDumpFile)
                  .withContext("BRAID_TOPO_DUMP_FILE (the cluster)"));
  }
  return Status::success();
}

Status Members::loadTopology(const Config& config) {
  // A file the user names must load; discovery that fails only costs the
  // ring order, which then stays 0, 1, ..., N-1.
  Result<topology::Graph> graph =
      config.topoFile.empty() && config.topoDumpFile.empty()
          ? discoveredOnce()
          : topology::obtainTopology(config.topoFile, config.topoDumpFile);
  if (!graph.ok()) {
    if (!config.topoFile.empty()) return graph.status().withContext("BRAID_TOPO_FILE");
    BRAID_WARN("topology discovery failed (%s); using the ring 0..%d",
               graph.status().message().c_str(), nranks - 1);
    return Status::success();
  }
  machine_ = std::move(graph).value();
  if (config.topoFile.empty()) {
    addEmulatedNics(config);
    addSocketInterfaces(config);
    leaveOutFilteredNics(config);
  }
  return Status::success();
}

void Members::addSocketInterfaces(const Config& config) {
  // Interfaces BRAID_SOCKET_IFNAME selects, several of them, are the socket transport's NICs
  // (comm/network.h), even virtual ones discovery leaves out; not where verbs will run.
  if (config.socketIfname.empty() || config.ib.emulate > 0 || !config.socketAllowed()) return;
  for (int nic : machine_->nodesOfType(topology::NodeType::kNic, 0)) {
    if (machine_->node(nic).rdma && !config.ib.disable) return;
  }
  const std::vector<braid::sockets::NamedAddress> found =
      braid::sockets::listInterfaces(config.socketIfname, bootstrap_->localAddress().ss_family);
  if (found.size() < 2) return;
  std::vector<std::string> names;
  for (const auto& f : found) names.push_back(f.name);
  const int added = topology::attachInterfaces(*machine_, names);
  if (added > 0) BRAID_INFO("topology: %d socket interface(s) added as NICs", added);
}

void Members::addEmulatedNics(const Config& config) {
  // The emulated HCA's ports are NICs of this host as far as planning goes: the rings and rails
  // the search plans on them are what the verbs transport then runs, as on a real cluster.
  if (config.ib.emulate <= 0 || config.ib.disable || !config.verbsAllowed()) return;
  transport::ib::emulateDevices(config.ib.emulate, config.ib.emulateKinds);
  Result<std::vector<topology::VerbsPort>> ports =
      transport::ib::describePorts(transport::ib::emulatedVerbs(), config.ib);
  if (!ports.ok()) {
    BRAID_INFO("topology: the emulated HCA's ports are not planned on: %s",
               ports.status().message().c_str());
    return;
  }
  const int added = topology::attachVerbsPorts(*machine_, ports.value());
  if (added > 0) BRAID_INFO("topology: %d port(s) of the emulated HCA added as NICs", added);
}

int32_t Members::numaIdOfThisRank() const {
  if (!machine_) return -1;
  return topology::numaOfCpus(*machine_, 0, topology::allowedCpus());
}

namespace {

// The graph node of `peer`'s GPU on host `host`: the one of its PCI bus ID; where no GPU of the
// host has it (a topology file written elsewhere), the one of its device number, as the file
// numbers them. -1 where neither is there.
int gpuNodeOf(const topology::Graph& graph, int host, const PeerInfo& peer) {
  const std::vector<int> gpus = graph.nodesOfType(topology::NodeType::kGpu, host);
  for (int gpu : gpus) {
    if (!graph.node(gpu).busId.empty() && graph.node(gpu).busId == peer.gpuBusId) return gpu;
  }
  for (int gpu : gpus) {
    if (graph.node(gpu).cudaDevice == peer.cudaDevice && !graph.node(gpu).busId.empty()) {
      return gpu;
    }
  }
  return -1;
}

}  // namespace

// Host-memory ranks, each on the CPU node of its host it is pinned to; GPU ranks on their GPUs,
// where the machine knows every one of them by its CUDA index (discovery, or a topology file's
// dev=): else on their CPUs too, as the plan then has nothing better to go by.
std::vector<topology::RankLocation> Members::locateRanks(const topology::Graph& graph,
                                                         const std::vector<int>& hostOf) const {
  std::vector<topology::RankLocation> where(nranks);
  int gpusFound = 0;
  for (int r = 0; r < nranks; ++r) {
    where[r].host = hostOf[r];
    where[r].numaId = peers_[r].numaId;
    if (peers_[r].cudaDevice < 0) continue;
    const int gpu = gpuNodeOf(graph, hostOf[r], peers_[r]);
    if (gpu < 0) continue;
    where[r].gpuBusId = graph.node(gpu).busId;
    ++gpusFound;
  }
  if (gpusFound > 0 && gpusFound < nranks) {
    if (rank == 0) {
      BRAID_INFO("topology: %d of %d ranks' GPUs are in the machine; planning on their CPUs",
                 gpusFound, nranks);
    }
    for (auto& place : where) place.gpuBusId.clear();
  }
  return where;
}

Status Members::planTopology(const Config& config) {
  ring_.resize(nranks);
  for (int r = 0; r < nranks; ++r) ring_[r] = r;
  std::vector<int> hostOf(nranks, 0);
  if (spansHosts()) {
    BRAID_TRY(exchangeTopology(config, &hostOf).withContext("exchanging the hosts' topologies"));
  }
  if (!machine_) return Status::success();
  const topology::Graph& graph = *machine_;

  topology::PlanOptions options;
  options.search.crossNic = config.crossNic;
  options.p2p.crossNic = config.crossNic;
  options.p2p.pxnLevel = config.pxnDisable ? 0 : config.p2pPxnLevel;
  if (!config.p2pLevel.empty()) {
    BRAID_ASSIGN_OR_RETURN(options.transports.p2pLevel, topology::parsePathType(config.p2pLevel));
  }
  if (!config.transports.empty()) {
    BRAID_ASSIGN_OR_RETURN(options.transports.allowed,
                           topology::TransportSet::parse(config.transports));
  }
  graphHost_ = hostOf[rank];
  const std::vector<topology::RankLocation> where = locateRanks(graph, hostOf);
  BRAID_ASSIGN_OR_RETURN(topology::Placement placement, topology::placeRanks(graph, where));
  const topology::Paths paths(graph);
  Result<topology::TopologyPlan> planned = topology::planTopology(graph, paths, placement, options);
  if (!planned.ok() && spansHosts()) {
    // The cluster as discovered may not explain how hosts meet (a host whose only interface is
    // virtual has no NIC in its graph); the socket transport reaches them anyway.
    if (rank == 0) {
      BRAID_WARN("topology: %s; using the ring 0..%d", planned.status().message().c_str(),
                 nranks - 1);
    }
    return Status::success();
  }
  BRAID_ASSIGN_OR_RETURN(topology::TopologyPlan plan, std::move(planned));
  if (rank == 0) BRAID_INFO("%s", topology::summarizeTopology(graph, plan).c_str());
  if (!plan.rings.channels.empty() &&
      plan.rings.channels[0].order.size() == static_cast<size_t>(nranks)) {
    ring_ = plan.rings.channels[0].order;
    keepRings(graph, plan.rings);
    if (spansHosts()) plannedNetworkGBs_ = plan.rings.totalGBs();
  }
  if (spansHosts()) {
    keepTrees(graph, plan.trees);
    keepP2pRoutes(graph, paths, plan);
  }
  return Status::success();
}

namespace {

PlannedHop namedHop(const topology::Graph& graph, const topology::NetHop& hop) {
  PlannedHop named{hop.fromRank, hop.toRank, "", ""};
  if (hop.sendNic >= 0) named.sendNic = graph.node(hop.sendNic).name;
  if (hop.recvNic >= 0) named.recvNic = graph.node(hop.recvNic).name;
  return named;
}

std::string hopNic(const std::vector<PlannedHop>& hops, int from, int to, bool sending) {
  for (const PlannedHop& hop : hops) {
    if (hop.from == from && hop.to == to) return sending ? hop.sendNic : hop.recvNic;
  }
  return "";
}

}  // namespace

void Members::keepTrees(const topology::Graph& graph, const topology::TreePlan& plan) {
  for (const topology::Tree& planned : plan.trees) {
    if (planned.ranks.size() != static_cast<size_t>(nranks)) return;
  }
  for (const topology::Tree& planned : plan.trees) {
    algo::PlannedTree tree(nranks);
    for (int r = 0; r < nranks; ++r) {
      tree[r].parent = planned.ranks[r].parent;
      tree[r].children = planned.ranks[r].children;
    }
    trees_.push_back(std::move(tree));
    std::vector<PlannedHop> hops;
    std::string route;
    // Edges between hosts, child to parent: the broadcast runs them the other way too.
    for (const topology::NetHop& hop : planned.netHops) {
      const PlannedHop up = namedHop(graph, hop);
      route += " " + std::to_string(up.from) + "->" + std::to_string(up.to) + " (" + up.sendNic +
               " to " + up.recvNic + ")";
      hops.push_back(up);
      hops.push_back(PlannedHop{up.to, up.from, up.recvNic, up.sendNic});
    }
    if (rank == 0 && !hops.empty()) {
      BRAID_INFO("topology: tree %zu between hosts:%s", trees_.size() - 1, route.c_str());
    }
    treeHops_.push_back(std::move(hops));
  }
}

void Members::keepRings(const topology::Graph& graph, const topology::RingPlan& plan) {
  std::map<int, std::set<std::string>> nicsByHost;
  for (const topology::Ring& planned : plan.channels) {
    if (planned.order.size() != static_cast<size_t>(nranks)) continue;
    PlannedRing kept;
    kept.order = planned.order;
    for (const topology::NetHop& hop : planned.netHops) {
      kept.hops.push_back(namedHop(graph, hop));
      if (hop.sendNic >= 0)
        nicsByHost[graph.node(hop.sendNic).host].insert(kept.hops.back().sendNic);
    }
    rings_.push_back(std::move(kept));
  }
  rails_ = 0;
  for (const auto& [host, nics] : nicsByHost)
    rails_ = std::max(rails_, static_cast<int>(nics.size()));
  for (size_t c = 0; c < rings_.size() && !rings_[c].hops.empty(); ++c) {
    std::string route;
    for (const PlannedHop& hop : rings_[c].hops) {
      route += " " + std::to_string(hop.from) + "->" + std::to_string(hop.to) + " (" + hop.sendNic +
               " to " + hop.recvNic + ")";
    }
    if (rank == 0) BRAID_INFO("topology: channel %zu between hosts:%s", c, route.c_str());
  }
}

std::string Members::plannedNic(int channel, int from, int to, bool sending) const {
  std::string nic;
  if (channel < 0) return nic;  // a GPU communicator's point-to-point FIFO: no ring's or tree's
  if (!rings_.empty()) {
    nic = hopNic(rings_[static_cast<size_t>(channel) % rings_.size()].hops, from, to, sending);
  }
  if (nic.empty() && !treeHops_.empty()) {
    nic = hopNic(treeHops_[static_cast<size_t>(channel) % treeHops_.size()], from, to, sending);
  }
  return nic;
}

int Members::rdmaNicIndex(const std::string& nic) const {
  if (!machine_) return -1;
  int index = 0;
  for (int node : machine_->nodesOfType(topology::NodeType::kNic, graphHost_)) {
    if (!machine_->node(node).rdma) continue;
    if (machine_->node(node).name == nic) return index;
    ++index;
  }
  return -1;
}

int Members::nearestNetDevice(const std::vector<std::string>& busIds,
                              std::optional<topology::PathType>* gpuPath) const {
  if (!machine_) return -1;
  topology::RankLocation here;
  here.numaId = peers_[rank].numaId;
  const int gpu = peers_[rank].cudaDevice >= 0 ? gpuNodeOf(*machine_, 0, peers_[rank]) : -1;
  if (gpu >= 0) here.gpuBusId = machine_->node(gpu).busId;
  Result<topology::Placement> placed = topology::placeRanks(*machine_, {here});
  if (!placed.ok() || placed.value()[0].device < 0) return -1;
  const int from = placed.value()[0].device;
  topology::PathType type = topology::PathType::kDis;
  const int nearest = topology::nearestNetDevice(*machine_, topology::Paths(*machine_), from,
                                                 busIds, localRank(), &type);
  if (gpuPath != nullptr && nearest >= 0 && gpu >= 0 &&
      machine_->node(from).type == topology::NodeType::kGpu) {
    *gpuPath = type;
  }
  return nearest;
}

std::optional<topology::PathType> Members::gpuNicPath(const std::string& port,
                                                      int portIndex) const {
  if (!machine_ || cudaDevice < 0) return std::nullopt;
  const int gpu = gpuNodeOf(*machine_, graphHost_, peers_[rank]);
  if (gpu < 0) return std::nullopt;
  int nic = machine_->findByName(graphHost_, port);
  if (nic < 0) {
    int index = 0;
    for (int node : machine_->nodesOfType(topology::NodeType::kNic, graphHost_)) {
      if (!machine_->node(node).rdma) continue;
      if (index++ == portIndex) nic = node;
    }
  }
  if (nic < 0) return std::nullopt;
  const topology::PathType type = topology::pathsFrom(*machine_, gpu)[nic].type;
  if (type == topology::PathType::kDis) return std::nullopt;
  return type;
}

std::vector<std::vector<int>> Members::channelOrders(int nchannels) const {
  std::vector<std::vector<int>> orders;
  for (int c = 0; c < nchannels; ++c) {
    orders.push_back(rings_.empty() ? ring_ : rings_[static_cast<size_t>(c) % rings_.size()].order);
  }
  return orders;
}

}  // namespace braid::comm
