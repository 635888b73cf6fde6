// Members: who the ranks of a communicator are and where each runs.
//
// It owns the bootstrap (the ring of sockets every rank joined at creation, which carries the
// out-of-band all-gathers and barriers), what every rank told the others about itself
// (PeerInfo: process, host, device, NUMA node), the machine they run on (topology/) and the
// ring order the topology search chose. Everything here is fixed once the communicator exists.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algo/tree.h"
#include "bootstrap/bootstrap.h"
#include "braid/status.h"
#include "config.h"
#include "topology/cpu_affinity.h"
#include "topology/graph.h"
#include "topology/plan.h"
#include "topology/search.h"

namespace braid::comm {

/// What every rank tells the others at creation (bootstrap allGather).
struct PeerInfo {
  int32_t rank;
  int32_t pid;
  uint64_t hostId;
  uint64_t nonce;  ///< random; rank 0's names this communicator's shm segments
  /// The device's number in its own process, -1 on host memory: it names a GPU only there
  /// (CUDA_VISIBLE_DEVICES renumbers each process's GPUs from 0).
  int32_t cudaDevice;
  /// What names the GPU across processes: its PCI bus ID, "0000:19:00.0" (topology/
  /// pci_bus_id.h's spelling); empty on host memory.
  char gpuBusId[16];
  /// The NUMA node of the CPU node holding every CPU this rank may run on
  /// (topology/cpu_affinity.h); -1 when unpinned or unknown.
  int32_t numaId;
  /// The CPUs this rank may run on (its creating thread's affinity); empty when unknown.
  topology::CpuMask cpus;
};

/// A hop of a planned ring between hosts, with the NICs (graph names, "mlx5_0:1") it leaves and
/// enters by.
struct PlannedHop {
  int from = -1;
  int to = -1;
  std::string sendNic;
  std::string recvNic;
};

/// One channel's ring as the topology search planned it.
struct PlannedRing {
  std::vector<int> order;
  std::vector<PlannedHop> hops;
};

// Who the ranks are is settled while the communicator is made, by Comm::create and the steps
// below, and then only read: every other part holds a const Members&.
class Members {
 public:
  explicit Members(int rank, int nranks, std::string name = {}, int cudaDevice = -1)
      : rank(rank), nranks(nranks), cudaDevice(cudaDevice), name(std::move(name)) {}

  /// Rank `rank` among `peers`, as exchangePeers would learn them: for the tests of what
  /// Members derives from them.
  Members(int rank, std::vector<PeerInfo> peers) : Members(rank, static_cast<int>(peers.size())) {
    peers_ = std::move(peers);
  }

  const int rank;
  const int nranks;
  const int cudaDevice;    ///< this rank's device; -1 on host memory
  const std::string name;  ///< the communicator's name (CommOptions::name); empty: none

  /// The bootstrap, once joinBootstrap has run; null before.
  bootstrap::Bootstrap* bootstrap() const { return bootstrap_.get(); }
  /// Every rank's PeerInfo, by rank, once exchangePeers has run.
  const std::vector<PeerInfo>& peers() const { return peers_; }
  /// The ring order of ranks (channel 0's).
  const std::vector<int>& ring() const { return ring_; }
  /// Every channel's ring, as planned (channel c of a schedule follows rings()[c % size()]);
  /// empty when the search planned none, and ring() then serves every channel.
  const std::vector<PlannedRing>& rings() const { return rings_; }
  /// The trees the search planned across hosts, and their hops between hosts.
  const std::vector<algo::PlannedTree>& trees() const { return trees_; }
  const std::vector<std::vector<PlannedHop>>& treeHops() const { return treeHops_; }
  /// The most NICs any host's channels leave by.
  int rails() const { return rails_; }
  /// What the planned rings move in all, GB/s, where they span hosts; 0 otherwise.
  double plannedNetworkGBs() const { return plannedNetworkGBs_; }
  /// The machine; empty when discovery failed.
  const std::optional<topology::Graph>& machine() const { return machine_; }

  /// Joins the bootstrap of the communicator of `ids` (one, or ncclCommInitRankScalable's
  /// several), giving up when `cancel` rises (Comm::create).
  Status joinBootstrap(const std::vector<UniqueId>& ids, int64_t timeoutMs,
                       const std::atomic<bool>* cancel);

  bool onOtherHost(int peer) const { return onOtherHostThan(peer, rank); }
  bool onOtherHostThan(int a, int b) const { return peers_[a].hostId != peers_[b].hostId; }
  /// Whether ranks `a` and `b` run on one GPU: on one host, with one PCI bus ID.
  bool shareGpu(int a, int b) const;
  /// Whether ranks `a` and `b` run on different GPUs of one host: the pairs whose traffic peer
  /// access carries, where the GPUs have it.
  bool onOtherGpuOfHost(int a, int b) const {
    return a != b && !onOtherHostThan(a, b) && !shareGpu(a, b);
  }
  /// The NIC (a graph name) that `from` sends by (`sending`) or `to` receives by on `channel`'s
  /// ring, or else its tree, as planned; empty where the plan names none (then the transport
  /// spreads its FIFOs).
  std::string plannedNic(int channel, int from, int to, bool sending) const;
  /// The NIC (a graph name) of this rank's point-to-point FIFO (send/recv, all-to-all: no ring
  /// or tree plans it) to `peer` (`sending`) or from it: sending, the route topology/net_routes.h
  /// plans (this rank's nearest NIC, or the peer's rail, through an NVLink peer with PXN);
  /// receiving, this rank's own nearest NIC. Empty where the topology planned none; `*how`
  /// then empty too, else what the log says of the choice.
  std::string p2pNic(int peer, bool sending, std::string* how) const;
  /// The rank of this host whose process relays this rank's point-to-point sends to `peer`
  /// (NCCL's PXN: its GPU is this one's NVLink peer, nearest the NIC of `peer`'s rail); -1
  /// where they leave directly.
  int p2pRelay(int peer) const;
  /// Where the NIC named `nic` stands among the RDMA NICs of this rank's host in the machine,
  /// in node order; -1 when it is none of them. A topology file (NCCL_TOPO_FILE) may name its
  /// NICs otherwise than this process's verbs devices (the emulated HCA's emu_0...): the
  /// transport then takes its port of the same rank in the order.
  int rdmaNicIndex(const std::string& nic) const;
  /// Which of a network plugin's devices, by the PCI bus IDs their sysfs paths end in (empty
  /// where unknown), is nearest this rank's GPU (or its CPU) in its host's graph, ranks equally
  /// near several going round them by local rank (topology::nearestNetDevice); -1 where the graph
  /// is unknown or holds none of them. Reads the host's own graph: call it before planTopology
  /// joins the hosts' graphs.
  /// `gpuPath`, where given, gets the path from the rank's GPU to that device (nullopt where the
  /// rank's GPU is not on the topology).
  int nearestNetDevice(const std::vector<std::string>& busIds,
                       std::optional<topology::PathType>* gpuPath = nullptr) const;
  /// The path from this rank's GPU to the verbs port named `port` (or, where the machine names
  /// its NICs otherwise, the RDMA NIC at `portIndex` in the order rdmaNicIndex counts): what
  /// NCCL_NET_GDR_LEVEL is held to. nullopt where the machine does not place both.
  std::optional<topology::PathType> gpuNicPath(const std::string& port, int portIndex) const;
  /// The ring order of each of `nchannels` channels, for the ring schedules.
  std::vector<std::vector<int>> channelOrders(int nchannels) const;
  /// Whether some rank runs on another host than this one (known after exchangePeers).
  bool spansHosts() const { return spansHosts_; }
  /// Each rank's host, hosts numbered in the order of their first ranks.
  std::vector<int> hostNumbers() const;
  /// How many hosts the ranks are on.
  int hostCount() const;
  /// This rank's place among the ranks of its host.
  int localRank() const;
  /// How many CPUs the ranks of this rank's host may run on between them: the union of their
  /// affinities, so that ranks bound to a core each count a core each, and ranks bound to one
  /// core share it. This process's own count where a rank's affinity is unknown.
  int coresOfHost() const;
  /// Whether some host runs more threads than it has CPUs: its ranks times `threadsPerRank`
  /// over the union of their affinities. Every rank answers alike, from what all exchanged;
  /// false where some rank's affinity is unknown, since the ranks could not agree then.
  bool someHostOversubscribed(int threadsPerRank) const;
  /// The first rank of this rank's host and how many follow it there, when a host's ranks are
  /// consecutive (Comm::hostBlock).
  std::pair<int, int> hostBlock() const;
  /// A host's ranks and the union of their affinities; `known` is false where some rank's
  /// affinity is unknown.
  struct HostCpus {
    int firstRank = -1;
    int ranks = 0;
    topology::CpuMask cpus;
    bool known = true;
    /// Counts rank `r`, whose affinity is `rankCpus` (empty: unknown).
    void add(int r, const topology::CpuMask& rankCpus) {
      if (firstRank < 0) firstRank = r;
      ++ranks;
      if (rankCpus.empty()) known = false;
      cpus |= rankCpus;
    }
  };
  HostCpus cpusOfHost(uint64_t hostId) const;
  /// Every host's, in the order of hostNumbers(): one pass over the ranks, however many hosts.
  std::vector<HostCpus> cpusOfHosts() const;

  /// Tells every rank who this one is and learns theirs; refuses a mix of GPU and host-memory
  /// ranks.
  Status exchangePeers(const Config& config);
  /// Finds the machine (topology/): loaded from BRAID_TOPO_FILE, or discovered. Before the
  /// peers are exchanged, since each rank tells the others where on it it runs
  /// (members_topology.cc).
  Status loadTopology(const Config& config);
  /// Places the ranks on the machine and takes the ring order from its search.
  Status planTopology(const Config& config);

 private:
  /// Joined by joinBootstrap; null before.
  std::unique_ptr<bootstrap::Bootstrap> bootstrap_;
  std::vector<PeerInfo> peers_;  ///< by rank, once exchangePeers has run
  std::vector<int> ring_;        ///< ring order of ranks (channel 0's)
  /// Every channel's ring, as planned (channel c of a schedule follows rings[c % size()]); empty
  /// when the search planned none, and ring_ then serves every channel.
  std::vector<PlannedRing> rings_;
  /// The trees the search planned, across hosts only (NCCL's: a chain in each host, a tree
  /// between hosts; tree all_reduce's channel c runs trees[c % size()]), with their hops
  /// between hosts. Empty on one host, where the double binary tree over ranks serves.
  std::vector<algo::PlannedTree> trees_;
  std::vector<std::vector<PlannedHop>> treeHops_;
  /// The most NICs any host's channels leave by: host communicators run at least this many
  /// channels, so that every NIC carries traffic (Links::configure).
  int rails_ = 0;
  /// What the planned rings move in all, GB/s (topology::RingPlan::totalGBs), where they span
  /// hosts: the network the cost model is fitted to (tune::Model::fitNetwork). 0 where no ring
  /// across hosts was planned.
  double plannedNetworkGBs_ = 0;
  /// The machine; empty when discovery failed (the ring order then stays 0..N-1).
  std::optional<topology::Graph> machine_;
  /// This rank's point-to-point routes to other hosts (p2pNic): the NIC and how it was chosen,
  /// by peer; and its own nearest NIC, where it receives. Empty without a plan.
  std::vector<std::string> p2pSendNics_;
  std::vector<std::string> p2pSendHow_;
  std::vector<int> p2pRelays_;
  std::string ownNic_;

  /// The NUMA node this rank runs on, for PeerInfo (-1: unknown).
  int32_t numaIdOfThisRank() const;
  /// A communicator across hosts: every rank's host graph through the bootstrap, joined into
  /// `machine_` (left empty when a rank has none); `hostOf` is each rank's host in it.
  Status exchangeTopology(const Config& config, std::vector<int>* hostOf);
  /// With BRAID_IB_EMULATE, the emulated HCA's ports as NICs of this host's graph.
  void addEmulatedNics(const Config& config);
  /// Where BRAID_SOCKET_IFNAME selects several interfaces, those as NICs of this host's graph.
  void addSocketInterfaces(const Config& config);
  /// Keeps the planned rings of all ranks, with their NICs by name, and logs the hops.
  void keepRings(const topology::Graph& graph, const topology::RingPlan& plan);
  /// Where each rank is in `graph` for the plan, `hostOf` giving their hosts (planTopology).
  std::vector<topology::RankLocation> locateRanks(const topology::Graph& graph,
                                                  const std::vector<int>& hostOf) const;
  /// Keeps the planned trees across hosts, with their NICs by name.
  void keepTrees(const topology::Graph& graph, const topology::TreePlan& plan);
  /// Plans this rank's point-to-point routes to the ranks of other hosts (members_routes.cc).
  void keepP2pRoutes(const topology::Graph& graph, const topology::Paths& paths,
                     const topology::TopologyPlan& plan);
  /// Leaves out of this host's graph the RDMA NICs BRAID_IB_HCA leaves out (a storage NIC), so
  /// that nothing is planned on them (members_routes.cc).
  void leaveOutFilteredNics(const Config& config);

  bool spansHosts_ = false;
  int graphHost_ = 0;  ///< this rank's host in `machine_`
};

}  // namespace braid::comm
