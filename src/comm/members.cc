// Members (members.h): the exchange of who every rank is, and the arithmetic of hosts.
#include "comm/members.h"

#include <unistd.h>

#include <algorithm>
#include <random>
#include <string>
#include <unordered_map>

#include "topology/cpu_affinity.h"
#include "topology/host_id.h"

namespace braid::comm {
namespace {

uint64_t randomNonce() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

Status Members::exchangePeers(const Config& config) {
  peers.assign(nranks, PeerInfo{});
  PeerInfo& me = peers[rank];
  me.rank = rank;
  me.pid = getpid();
  me.hostId = topology::hostId(config.hostIdOverride);
  me.nonce = randomNonce();
  me.cudaDevice = cudaDevice;
  me.numaId = numaIdOfThisRank();
  me.cpus = topology::CpuMask::of(topology::allowedCpus());
  BRAID_TRY(bootstrap->allGather(peers.data(), sizeof(PeerInfo)));
  for (int r = 0; r < nranks; ++r) {
    if (peers[r].rank != r) {
      return internalError("bootstrap returned a garbled peer table at rank " + std::to_string(r));
    }
    if ((peers[r].cudaDevice >= 0) != (me.cudaDevice >= 0)) {
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

std::vector<int> Members::hostNumbers() const {
  std::vector<int> hostOf(nranks, -1);
  int hosts = 0;
  for (int r = 0; r < nranks; ++r) {
    for (int q = 0; q < r && hostOf[r] < 0; ++q) {
      if (!onOtherHostThan(r, q)) hostOf[r] = hostOf[q];
    }
    if (hostOf[r] < 0) hostOf[r] = hosts++;
  }
  return hostOf;
}

int Members::hostCount() const {
  const std::vector<int> hosts = hostNumbers();
  return hosts.empty() ? 1 : *std::max_element(hosts.begin(), hosts.end()) + 1;
}

int Members::localRank() const {
  int before = 0;
  for (int r = 0; r < rank; ++r) before += onOtherHost(r) ? 0 : 1;
  return before;
}

int Members::coresOfHost() const {
  topology::CpuMask cores;
  for (int r = 0; r < nranks; ++r) {
    if (onOtherHost(r)) continue;
    if (peers[r].cpus.empty()) return topology::usableCores();
    cores |= peers[r].cpus;
  }
  return cores.count();  // this rank's own CPUs are in it: never 0
}

bool Members::someHostOversubscribed(int threadsPerRank) const {
  struct Host {
    int ranks = 0;
    topology::CpuMask cpus;
  };
  std::unordered_map<uint64_t, Host> hosts;
  for (int r = 0; r < nranks; ++r) {
    if (peers[r].cpus.empty()) return false;
    Host& h = hosts[peers[r].hostId];
    ++h.ranks;
    h.cpus |= peers[r].cpus;
  }
  for (const auto& [id, h] : hosts) {
    if (static_cast<int64_t>(h.ranks) * threadsPerRank > h.cpus.count()) return true;
  }
  return false;
}

std::pair<int, int> Members::hostBlock() const {
  const uint64_t host = peers[rank].hostId;
  int first = rank;
  int last = rank;
  while (first > 0 && peers[first - 1].hostId == host) --first;
  while (last + 1 < nranks && peers[last + 1].hostId == host) ++last;
  return {first, last - first + 1};
}

}  // namespace braid::comm
