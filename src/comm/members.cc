// Members (members.h): the exchange of who every rank is, and the arithmetic of hosts.
#include "comm/members.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>

#include "gpu/runtime.h"
#include "topology/cpu_affinity.h"
#include "topology/host_id.h"
#include "topology/pci_bus_id.h"

namespace braid::comm {
namespace {

// Device `device`'s PCI bus ID, in the one spelling (topology/pci_bus_id.h), into `out`.
Status noteGpuBusId(int device, char (&out)[16]) {
  BRAID_ASSIGN_OR_RETURN(const gpu::DeviceInfo info, gpu::runtime().deviceInfo(device));
  BRAID_ASSIGN_OR_RETURN(const std::string bus, topology::normalizePciBusId(info.pciBusId));
  if (bus.size() >= sizeof(out)) return internalError("GPU bus ID too long: " + bus);
  snprintf(out, sizeof(out), "%s", bus.c_str());
  return Status::success();
}

// How many hosts `hostOf` (hostNumbers) numbers; 1 for no ranks yet.
int hostCountOf(const std::vector<int>& hostOf) {
  return hostOf.empty() ? 1 : *std::max_element(hostOf.begin(), hostOf.end()) + 1;
}

uint64_t randomNonce() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

Status Members::joinBootstrap(const std::vector<UniqueId>& ids, int64_t timeoutMs,
                              const std::atomic<bool>* cancel) {
  BRAID_ASSIGN_OR_RETURN(bootstrap_,
                         bootstrap::Bootstrap::create(ids, rank, nranks, timeoutMs, cancel));
  return Status::success();
}

Status Members::exchangePeers(const Config& config) {
  peers_.assign(nranks, PeerInfo{});
  PeerInfo& me = peers_[rank];
  me.rank = rank;
  me.pid = getpid();
  me.hostId = topology::hostId(config.hostIdOverride);
  me.nonce = randomNonce();
  me.cudaDevice = cudaDevice;
  if (cudaDevice >= 0) BRAID_TRY(noteGpuBusId(cudaDevice, me.gpuBusId));
  me.numaId = numaIdOfThisRank();
  me.cpus = topology::CpuMask::of(topology::allowedCpus());
  BRAID_TRY(bootstrap_->allGather(peers_.data(), sizeof(PeerInfo)));
  for (int r = 0; r < nranks; ++r) {
    if (peers_[r].rank != r) {
      return internalError("bootstrap returned a garbled peer table at rank " + std::to_string(r));
    }
    if ((peers_[r].cudaDevice >= 0) != (me.cudaDevice >= 0)) {
      const int onGpu = me.cudaDevice >= 0 ? rank : r;
      const int onHost = me.cudaDevice >= 0 ? r : rank;
      return invalidUsage("rank " + std::to_string(onGpu) + " runs on a GPU but rank " +
                          std::to_string(onHost) +
                          " on host memory: all ranks of a communicator must do the same (set "
                          "BRAID_HOST_COMM=1 everywhere for host memory, or give every rank a "
                          "device)");
    }
  }
  spansHosts_ = false;
  for (int r = 0; r < nranks; ++r) spansHosts_ = spansHosts_ || onOtherHost(r);
  return Status::success();
}

bool Members::shareGpu(int a, int b) const {
  return !onOtherHostThan(a, b) && peers_[a].gpuBusId[0] != '\0' &&
         strcmp(peers_[a].gpuBusId, peers_[b].gpuBusId) == 0;
}

std::vector<int> Members::hostNumbers() const {
  // A map rather than a scan of the ranks before: a communicator of one rank per host has as
  // many hosts as ranks.
  std::unordered_map<uint64_t, int> numberOf;
  std::vector<int> hostOf(nranks);
  for (int r = 0; r < nranks; ++r) {
    hostOf[r] = numberOf.emplace(peers_[r].hostId, static_cast<int>(numberOf.size())).first->second;
  }
  return hostOf;
}

int Members::hostCount() const { return hostCountOf(hostNumbers()); }

int Members::localRank() const {
  int before = 0;
  for (int r = 0; r < rank; ++r) before += onOtherHost(r) ? 0 : 1;
  return before;
}

Members::HostCpus Members::cpusOfHost(uint64_t hostId) const {
  HostCpus host;
  for (int r = 0; r < nranks; ++r) {
    if (peers_[r].hostId == hostId) host.add(r, peers_[r].cpus);
  }
  return host;
}

std::vector<Members::HostCpus> Members::cpusOfHosts() const {
  const std::vector<int> hostOf = hostNumbers();
  std::vector<HostCpus> hosts(hostOf.empty() ? 0 : hostCountOf(hostOf));
  for (int r = 0; r < nranks; ++r) hosts[hostOf[r]].add(r, peers_[r].cpus);
  return hosts;
}

int Members::coresOfHost() const {
  const HostCpus host = cpusOfHost(peers_[rank].hostId);
  // This rank's own CPUs are in a known union: never 0.
  return host.known ? host.cpus.count() : topology::usableCores();
}

bool Members::someHostOversubscribed(int threadsPerRank) const {
  bool oversubscribed = false;
  for (const HostCpus& host : cpusOfHosts()) {
    if (!host.known) return false;
    oversubscribed |= static_cast<int64_t>(host.ranks) * threadsPerRank > host.cpus.count();
  }
  return oversubscribed;
}

std::pair<int, int> Members::hostBlock() const {
  const uint64_t host = peers_[rank].hostId;
  int first = rank;
  int last = rank;
  while (first > 0 && peers_[first - 1].hostId == host) --first;
  while (last + 1 < nranks && peers_[last + 1].hostId == host) ++last;
  return {first, last - first + 1};
}

}  // namespace braid::comm
