// Links (links.h): the connections the algorithms' schedules run on.
//
// A schedule names, per channel, the peers each step receives from and sends
// to; ring, trees and their rooted variants need different pairs, so they
// are connected the first time a schedule uses them, and kept. Segment names
// are a function of the communicator, the pair, the channel and the
// protocol, so no handshake is needed: the receiver creates its end, the
// sender opens it once it exists and unlinks the name.
//
// linkSchedule makes every receiving end a schedule needs before it waits
// for any sending end. Every rank that links the same schedule does the
// same, so the ends a sender waits for are made by receivers that wait for
// nothing first: no cycle of waits is possible.
//
// A peer on another host is a socket FIFO instead (comm/network.cc): the
// sender connects to the receiver's listener, and the receiving end waits
// for that connection on its own proxy thread, so linking waits for nobody.
#include "comm/links.h"

#include <atomic>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "algo/ring_common.h"
#include "base/futex.h"
#include "base/line_latency.h"
#include "base/log.h"
#include "transport/net/socket/socket_fifo.h"
#include "transport/shm/shm_fifo.h"
#include "transport/shm/shm_ll_fifo.h"

namespace braid::comm {
namespace {

uint64_t protocolSalt(algo::Protocol protocol) {
  return protocol == algo::Protocol::kLl ? 0x4c4c4c4c4c4c4c4cull : 0;
}

// With a core per rank, a waiter polls long enough to cover a peer's copy of
// a FIFO slot (a few tens of microseconds) before paying for a futex sleep
// and wake. With more ranks than cores it does not poll at all: the rank it
// waits for may need this very core, and yielding it (base/futex.h) hands
// it over at once. Measured with 4 ranks on 2 cores, 8 B all_reduce: 14 us
// with no polling, 30 us with 2 us of polling, 90 us with 20 us.
constexpr uint32_t kSpinNsDedicated = 100000;
constexpr uint32_t kSpinNsShared = 0;

// Host ranks across hosts whose host runs more threads than it has cores (each rank's and two
// proxies per channel) hand every slice over between threads that wait for the scheduler to run
// them: measured on 2 cores, 2 hosts x 1 rank, 0.15 ms on average from a wake to the run. At
// 512 KiB slots that cost about 0.1 ms per slice, a fifth of a 64 MiB all_reduce; slots of
// 4 MiB hand over an eighth as often (docs/benchmarks.md, 2026-12-06). Only where every host has
// one rank: all its FIFOs are then network ones, in memory of its own committed as slots are
// written (shm::createPrivateFifo), where FIFOs between ranks of a host reserve all their bytes
// in /dev/shm, which containers keep small.
constexpr int64_t kOversubscribedNetworkFifoBytes = 32 << 20;

}  // namespace

Links::~Links() {
  // Receiving ends whose sender never came still have a name in /dev/shm.
  for (const auto& name : madeSegments_) (void)transport::shm::unlinkSegment(name);
}

void Links::configure(tune::Model& model) {
  // A GPU rank's channels come from its device (GpuSide::chooseChannels), after this. Across
  // hosts a host rank runs a channel per rail at least, so that every NIC carries traffic,
  // within NCCL_MIN/MAX_NCHANNELS; BRAID_NCHANNELS, where given, decides alone.
  nchannels_ = config_.nchannels;
  if (!config_.nchannelsSet) {
    nchannels_ = std::max(nchannels_, members_.rails());
    if (config_.minChannels > 0) nchannels_ = std::max(nchannels_, config_.minChannels);
    if (config_.maxChannels > 0) nchannels_ = std::min(nchannels_, config_.maxChannels);
  }
  const int threadsPerRank = network_.active() ? 1 + 2 * nchannels_ : 1;
  int64_t fifoBytes = config_.buffSize;
  // Decided from every host's counts, so that every rank makes the same FIFOs.
  if (!config_.buffSizeSet && members_.cudaDevice < 0 && network_.active() &&
      members_.hostCount() == members_.nranks && members_.someHostOversubscribed(threadsPerRank)) {
    fifoBytes = std::max(fifoBytes, kOversubscribedNetworkFifoBytes);
  }
  slotBytes_ = static_cast<size_t>(fifoBytes) / transport::kFifoSlots;
  slotBytes_ &= ~static_cast<size_t>(63);  // keep slots cache-line aligned

  // Spinning helps only when every rank has a core to itself; beyond that a
  // spinning rank steals the core its peer needs to make progress. A rank
  // whose FIFOs cross hosts has two proxy threads per channel moving them
  // (transport/net/socket/socket_fifo.h), and the kernel's TCP work besides: its executor waits on
  // them, so it spins only where they have cores too. Measured with 2 hosts
  // x 1 rank on 2 cores: 8 B all_reduce 268 us with the spin, 60 us without;
  // 64 MiB, 7-12% less CPU without.
  // The cores are those the host's ranks may run on between them, not this process's alone:
  // ranks bound to a core each (mpirun --bind-to core, braid-perf --bind core) each see one
  // core, yet none takes another's. Counted as its own, a bound rank slept in the kernel at
  // every wait: 8 B all_reduce, 2 ranks bound on 2 cores, 0.64 us against 0.30 unbound.
  const int cores = members_.coresOfHost();
  corePerThread_ = members_.nranks * threadsPerRank <= cores;
  if (config_.spinUs >= 0) {
    spinNs_ = static_cast<uint32_t>(std::min<int64_t>(config_.spinUs * 1000, UINT32_MAX));
  } else {
    spinNs_ = corePerThread_ ? kSpinNsDedicated : kSpinNsShared;
  }
  model.hostCores = cores;

  std::string ringText;
  for (int r : members_.ring()) ringText += " " + std::to_string(r);
  const std::string channelText = members_.cudaDevice >= 0
                                      ? std::string("channels from the device")
                                      : std::to_string(nchannels_) + " channel(s)";
  BRAID_INFO(
      "ring:%s; %s; transport %s; fifo %d x %zu bytes (ll %zu); "
      "spin %u ns (%d cores)",
      ringText.c_str(), channelText.c_str(),
      members_.cudaDevice >= 0
          ? "cuda_ipc"
          : (network_.active() ? "shm within a host, socket between hosts" : "shm"),
      transport::kFifoSlots, slotBytes_, llSlotBytes(), spinNs_, cores);

  const uint64_t nonce = members_.peers()[0].nonce ^ members_.bootstrap()->magic();
  p2pNonce_ = nonce ^ 0x7032707032703270ull;  // point-to-point FIFOs get names of their own
  linkNonce_ = nonce;
}

namespace {

// A line slower than this between two CPUs crosses between last-level caches: a VM's vCPUs on
// two chiplets (290-310 ns, docs/benchmarks.md), two sockets; within one it takes 35-80 ns.
constexpr double kFarLineNs = 150;

// The first CPU of `mask` other than `other`; -1 where there is none.
int firstCpuOf(const topology::CpuMask& mask, int other) {
  for (int cpu = 0; cpu < topology::CpuMask::kBits; ++cpu) {
    if (cpu != other && (mask.words[cpu / 64] >> (cpu % 64) & 1) != 0) return cpu;
  }
  return -1;
}

}  // namespace

Status Links::chooseSlotStores() {
  if (config_.streamSlots >= 0) {
    streamSlots_ = config_.streamSlots == 1;
    return Status::success();
  }
  // Only the starting choice: the calls then measure both (tune/slot_stores.h). Each host's first
  // rank measures between its own first CPU and another of its host's; every rank knows every
  // affinity, so all work out alike whether some host has two CPUs and skip the exchange where
  // none has.
  const std::vector<Members::HostCpus> hosts = members_.cpusOfHosts();
  auto cpusToMeasure = [this](const Members::HostCpus& host) {
    const int a = firstCpuOf(members_.peers()[host.firstRank].cpus, -1);
    const int b = a < 0 ? -1 : firstCpuOf(host.cpus, a);
    return std::pair<int, int>{a, b};
  };
  const bool someHostMeasures =
      std::any_of(hosts.begin(), hosts.end(),
                  [&](const Members::HostCpus& host) { return cpusToMeasure(host).second >= 0; });
  if (!someHostMeasures) {
    streamSlots_ = false;
    return Status::success();
  }
  const int rank = members_.rank;
  const Members::HostCpus& myHost = hosts[members_.hostNumbers()[rank]];
  const int leader = myHost.firstRank;
  std::vector<float> lineNs(members_.nranks, -1.0f);
  const auto [cpuA, cpuB] = cpusToMeasure(myHost);
  if (leader == rank && cpuB >= 0) {
    lineNs[rank] = static_cast<float>(recentLineTransferNs(cpuA, cpuB));
  }
  BRAID_TRY(members_.bootstrap()
                ->allGather(lineNs.data(), sizeof(float))
                .withContext("sharing the host's cache-line time"));
  const float ns = lineNs[leader];
  streamSlots_ = ns > kFarLineNs;
  if (leader == rank && ns > 0) {
    BRAID_INFO(
        "slot stores: %s first (a cache line took %.0f ns between CPUs %d and %d; "
        "streamed above %.0f), then as calls measure",
        streamSlots_ ? "streamed" : "plain", ns, cpuA, cpuB, kFarLineNs);
  }
  return Status::success();
}

Status Links::connectRing(SelectorSettings& settings) {
  const int rank = members_.rank;
  const int nranks = members_.nranks;
  if (nranks == 1) return Status::success();
  if (!config_.transportAllowed("shm")) {
    return invalidUsage("BRAID_TRANSPORTS=" + config_.transports +
                        " excludes shm, the only transport implemented for ranks on one host");
  }
  BRAID_TRY(chooseSlotStores());
  exec::Program ringLinks;
  ringLinks.channels.resize(nchannels_);
  // Neighbours by this rank's place in the ring, which is its rank only
  // when the order is 0..N-1.
  const std::vector<std::vector<int>> orders = members_.channelOrders(nchannels_);
  for (int c = 0; c < nchannels_; ++c) {
    const std::vector<int>& ring = orders[c];
    const int pos = algo::ringPosition(ring, rank);
    if (pos == nranks) {
      return internalError("rank " + std::to_string(rank) + " is not in channel " +
                           std::to_string(c) + "'s ring");
    }
    const auto [prev, next] = algo::ringNeighboursAt(ring, pos);
    ringLinks.channels[c].recvPeers.push_back(prev);
    ringLinks.channels[c].sendPeers.push_back(next);
  }
  std::vector<exec::ChannelConnections> unused;
  BRAID_TRY(linkSchedule(ringLinks, algo::Protocol::kSimple, &unused));

  tune::Allowed& allowed = settings.allowed;
  if (allowed.algorithm[static_cast<int>(algo::Algorithm::kOneShot)]) {
    bootstrap::Bootstrap* bootstrap = members_.bootstrap();
    BRAID_ASSIGN_OR_RETURN(
        oneShot_,
        exec::OneShotBoard::create(
            linkNonce_ ^ 0x6f6e6573686f7421ull, rank, nranks, exec::OneShotBoard::kDefaultMaxBytes,
            [bootstrap] { return bootstrap->barrier(); }, exec::OneShotBoard::kLlFlagPeriod,
            /*fencelessPublish=*/corePerThread_));
    allowed.oneShotMaxBytes = oneShot_->maxBytes();
    settings.oneShotBoard = true;
  }
  if (config_.zeroCopy != 0 && !members_.spansHosts()) BRAID_TRY(makeZeroCopyBoard());
  BRAID_INFO("selection: %s%s", tune::describeAllowed(allowed).c_str(),
             settings.deterministic ? "; deterministic reductions" : "");
  return Status::success();
}

transport::WaitContext Links::waitContext() const {
  transport::WaitContext w;
  // Every call makes one and few reach it: the tick clock's read is a fraction of a precise one.
  w.deadline = Deadline::afterMsCoarse(config_.timeoutMs);
  w.abort = health_.stopFlag();
  w.spinNs = spinNs_;
  return w;
}

size_t Links::llSlotBytes() const { return std::min(transport::shm::kLlSlotBytes, slotBytes_); }

Status Links::makeZeroCopyBoard() {
  bootstrap::Bootstrap* bootstrap = members_.bootstrap();
  exec::ZeroCopyBoard::Options options;
  if (config_.zeroCopy == 2) options.crossMemory = exec::CrossMemoryPolicy::kAlways;
  BRAID_ASSIGN_OR_RETURN(zeroCopy_,
                         exec::ZeroCopyBoard::create(
                             linkNonce_ ^ 0x7a65726f636f7079ull, members_.rank, members_.nranks,
                             [bootstrap] { return bootstrap->barrier(); }, options));
  if (!zeroCopy_->usable()) {
    // Said once per process: every communicator of it would say the same.
    static std::atomic<bool> said{false};
    if (!said.exchange(true)) {
      BRAID_INFO(
          "zero-copy off: %s; large all_reduces copy through the FIFOs (ptrace scope, "
          "a seccomp filter or separate PID namespaces forbid cross-memory attach)",
          zeroCopy_->unusableReason().c_str());
    }
  } else if (!zeroCopy_->crossMemory() && !zeroCopy_->peersInProcess()) {
    BRAID_INFO(
        "zero-copy: buffers from ncclMemAlloc only; other buffers copy through the FIFOs "
        "(the kernel's cross-memory copy ran at %.2f of a plain copy's rate here; "
        "BRAID_ZERO_COPY=2 uses it anyway)",
        zeroCopy_->crossMemoryRatio());
  }
  return Status::success();
}

Status Links::linkSchedule(const exec::Program& program, algo::Protocol protocol,
                           std::vector<exec::ChannelConnections>* out) {
  const size_t slot = protocol == algo::Protocol::kLl ? llSlotBytes() : slotBytes_;
  const uint64_t nonce = linkNonce_ ^ protocolSalt(protocol);
  std::set<std::pair<int, int>> recvPairs;  // (channel, peer)
  std::set<std::pair<int, int>> sendPairs;
  for (size_t c = 0; c < program.channels.size(); ++c) {
    for (int peer : program.channels[c].recvPeers) recvPairs.insert({static_cast<int>(c), peer});
    for (int peer : program.channels[c].sendPeers) sendPairs.insert({static_cast<int>(c), peer});
  }
  BRAID_TRY(network_.checkCrossesHosts(protocol, recvPairs, sendPairs));
  auto greeting = [&](int sender, int receiver, int channel) {
    return transport::net::Greeting::of(nonce, sender, receiver, channel,
                                        static_cast<int>(protocol));
  };
  for (const auto& [c, peer] : recvPairs) BRAID_TRY(makeShmRecvEnd(c, peer, protocol));
  for (const auto& [c, peer] : sendPairs) {
    auto& end = sendLinks_[{peer, c, protocol}];
    if (end || !members_.onOtherHost(peer)) continue;
    BRAID_ASSIGN_OR_RETURN(end, network_.connectFifo(peer, greeting(members_.rank, peer, c), slot));
    BRAID_TRACE("links: socket FIFO to rank %d on channel %d connected", peer, c);
  }
  const transport::WaitContext wait = waitContext();
  for (const auto& [c, peer] : sendPairs) BRAID_TRY(openShmSendEnd(c, peer, protocol, wait));
  for (const auto& [c, peer] : recvPairs) {
    auto& end = recvLinks_[{peer, c, protocol}];
    if (end) continue;
    BRAID_ASSIGN_OR_RETURN(end, network_.awaitFifo(peer, greeting(peer, members_.rank, c), slot));
  }
  out->assign(program.channels.size(), exec::ChannelConnections{});
  for (size_t c = 0; c < program.channels.size(); ++c) {
    const int ch = static_cast<int>(c);
    for (int peer : program.channels[c].recvPeers) {
      (*out)[c].recv.push_back(recvLinks_[{peer, ch, protocol}].get());
    }
    for (int peer : program.channels[c].sendPeers) {
      (*out)[c].send.push_back(sendLinks_[{peer, ch, protocol}].get());
    }
  }
  return Status::success();
}

Status Links::makeShmRecvEnd(int channel, int peer, algo::Protocol protocol) {
  auto& end = recvLinks_[{peer, channel, protocol}];
  if (end || members_.onOtherHost(peer)) return Status::success();
  const bool ll = protocol == algo::Protocol::kLl;
  const size_t slot = ll ? llSlotBytes() : slotBytes_;
  const std::string name = transport::shm::segmentName(linkNonce_ ^ protocolSalt(protocol), peer,
                                                       members_.rank, channel);
  if (ll) {
    BRAID_ASSIGN_OR_RETURN(end, transport::shm::createLlRecvEnd(name, slot));
  } else {
    BRAID_ASSIGN_OR_RETURN(end, transport::shm::createRecvEnd(name, slot));
  }
  madeSegments_.push_back(name);  // unlinked by the sender, or at destruction if it never comes
  BRAID_TRACE("links: %s FIFO from rank %d on channel %d made", algo::protocolName(protocol), peer,
              channel);
  return Status::success();
}

Status Links::openShmSendEnd(int channel, int peer, algo::Protocol protocol,
                             const transport::WaitContext& wait) {
  auto& end = sendLinks_[{peer, channel, protocol}];
  if (end) return Status::success();
  const bool ll = protocol == algo::Protocol::kLl;
  const size_t slot = ll ? llSlotBytes() : slotBytes_;
  const std::string name = transport::shm::segmentName(linkNonce_ ^ protocolSalt(protocol),
                                                       members_.rank, peer, channel);
  for (int attempt = 0; !end; ++attempt) {
    if (ll) {
      BRAID_ASSIGN_OR_RETURN(end, transport::shm::tryOpenLlSendEnd(name, slot));
    } else {
      BRAID_ASSIGN_OR_RETURN(end, transport::shm::tryOpenSendEnd(name, slot));
    }
    if (end) break;
    if (health_.stopped()) return futex::abortedError(peer);
    if (wait.deadline.expired()) {
      return remoteError("rank " + std::to_string(peer) + " did not make its " +
                         algo::protocolName(protocol) + " FIFO for channel " +
                         std::to_string(channel) +
                         " in time (BRAID_TIMEOUT_MS); is it running the same collective?");
    }
    // The receiver makes its end as soon as it links the same schedule.
    if (attempt < 100) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  BRAID_TRY(transport::shm::unlinkSegment(name));
  BRAID_TRACE("links: %s FIFO to rank %d on channel %d opened", algo::protocolName(protocol), peer,
              channel);
  return Status::success();
}

}  // namespace braid::comm
