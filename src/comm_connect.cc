// Connecting a communicator: the ring order, how waiters spin, the ring's
// FIFOs (comm_links.cc makes them) and the one-shot board.
#include <algorithm>
#include <cstdint>
#include <string>

#include "algo/ring_common.h"
#include "base/log.h"
#include "comm_impl.h"
#include "topology/host_id.h"
#include "transport/shm/shm_fifo.h"

namespace braid {
namespace {

// With a core per rank, a waiter polls long enough to cover a peer's copy of
// a FIFO slot (a few tens of microseconds) before paying for a futex sleep
// and wake. With more ranks than cores it does not poll at all: the rank it
// waits for may need this very core, and yielding it (base/futex.h) hands
// it over at once. Measured with 4 ranks on 2 cores, 8 B all_reduce: 14 us
// with no polling, 30 us with 2 us of polling, 90 us with 20 us.
constexpr uint32_t kSpinNsDedicated = 100000;
constexpr uint32_t kSpinNsShared = 0;
// Channels of a GPU communicator unless BRAID_NCHANNELS says: a guess until
// scripts/gpu-check has measured them on a GPU (docs/benchmarks.md).
constexpr int kGpuChannels = 8;

}  // namespace

Status Comm::Impl::connectRing() {
  nchannels = config.nchannels;
  // A GPU rank's channels are blocks of its kernel: one block cannot move
  // data as fast as the GPU's memory, several can. On the emulated GPU a
  // block is a thread, and one channel is the CPU path's own choice too.
  if (cudaDevice >= 0 && !config.nchannelsSet && !gpu::runtime().emulated()) {
    nchannels = kGpuChannels;
  }
  slotBytes = static_cast<size_t>(config.buffSize) / transport::kFifoSlots;
  slotBytes &= ~static_cast<size_t>(63);  // keep slots cache-line aligned

  // Spinning helps only when every rank has a core to itself; beyond that a
  // spinning rank steals the core its peer needs to make progress.
  const int cores = topology::usableCores();
  if (config.spinUs >= 0) {
    spinNs = static_cast<uint32_t>(std::min<int64_t>(config.spinUs * 1000, UINT32_MAX));
  } else {
    spinNs = nranks <= cores ? kSpinNsDedicated : kSpinNsShared;
  }
  model.hostCores = cores;

  std::string ringText;
  for (int r : ring) ringText += " " + std::to_string(r);
  BRAID_INFO(
      "ring:%s; %d channel(s); transport %s; fifo %d x %zu bytes (ll %zu); "
      "spin %u ns (%d cores)",
      ringText.c_str(), nchannels,
      cudaDevice >= 0 ? "cuda_ipc"
                      : (spansHosts() ? "shm within a host, socket between hosts" : "shm"),
      transport::kFifoSlots, slotBytes, llSlotBytes(), spinNs, cores);

  const uint64_t nonce = peers[0].nonce ^ bootstrap->magic();
  p2pNonce = nonce ^ 0x7032707032703270ull;  // point-to-point FIFOs get names of their own
  linkNonce = nonce;
  if (cudaDevice >= 0) return connectGpu();
  if (nranks == 1) return Status::success();
  if (!config.transportAllowed("shm")) {
    return invalidUsage("BRAID_TRANSPORTS=" + config.transports +
                        " excludes shm, the only transport implemented for ranks on one host");
  }

  // The ring's Simple FIFOs are made now, so that a communicator that cannot
  // get shared memory fails at creation; the others come with their first use.
  exec::Program ringLinks;
  ringLinks.channels.resize(nchannels);
  // Neighbours by this rank's place in the ring, which is its rank only
  // when the order is 0..N-1.
  const int pos = algo::ringPosition(ring, rank);
  if (pos == nranks) return internalError("rank " + std::to_string(rank) + " is not in its ring");
  const auto [prev, next] = algo::ringNeighboursAt(ring, pos);
  for (auto& channel : ringLinks.channels) {
    channel.recvPeers.push_back(prev);
    channel.sendPeers.push_back(next);
  }
  std::vector<exec::ChannelConnections> unused;
  BRAID_TRY(linkSchedule(ringLinks, algo::Protocol::kSimple, &unused));

  if (allowed.algorithm[static_cast<int>(algo::Algorithm::kOneShot)]) {
    BRAID_ASSIGN_OR_RETURN(oneShot,
                           exec::OneShotBoard::create(nonce ^ 0x6f6e6573686f7421ull, rank, nranks,
                                                      exec::OneShotBoard::kDefaultMaxBytes,
                                                      [this] { return bootstrap->barrier(); }));
    allowed.oneShotMaxBytes = oneShot->maxBytes();
  }
  BRAID_INFO("selection: %s%s", tune::describeAllowed(allowed).c_str(),
             deterministic ? "; deterministic reductions" : "");
  return Status::success();
}

// A GPU communicator: its FIFOs are GPU FIFOs made on first use
// (comm_gpu_links.cc), with no shm ring; it runs the ring and the tree on
// the Simple and LL protocols and the one-shot all-reduce on its GPU
// boards (exec/device_one_shot.h), chosen by the GPU model
// (tune::Model::gpuDefaults).
Status Comm::Impl::connectGpu() {
  if (!config.transportAllowed("cuda_ipc") && !config.transportAllowed("shm")) {
    return invalidUsage("BRAID_TRANSPORTS=" + config.transports +
                        " excludes both cuda_ipc and shm, the transports of GPUs on one host");
  }
  model = tune::Model::gpuDefaults();
  BRAID_TRY(createGpu(cudaDevice));
  gpu->timeoutMs = static_cast<uint64_t>(config.timeoutMs);
  const int oneShotAlgo = static_cast<int>(algo::Algorithm::kOneShot);
  allowed.oneShotMaxBytes = 0;
  if (nranks > static_cast<int>(kernels::engine::kMaxOneShotRanks)) {
    allowed.algorithm[oneShotAlgo] = false;
  }
  if (allowed.algorithm[oneShotAlgo] && nranks > 1) {
    // Every peer reads the board: it lies where each could place a FIFO.
    auto placement = transport::cuda_ipc::FifoPlacement::kDeviceMemory;
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer != rank && placementFor(peer) != placement) {
        placement = transport::cuda_ipc::FifoPlacement::kPinnedHost;
      }
    }
    BRAID_ASSIGN_OR_RETURN(gpu->oneShot,
                           exec::DeviceOneShot::create(
                               *gpu->runtime, linkNonce ^ 0x6770756f6e657368ull, rank, nranks,
                               exec::DeviceOneShot::kDefaultMaxBytes, placement,
                               [this] { return bootstrap->barrier(); }, gpu->stream));
    allowed.oneShotMaxBytes = gpu->oneShot->maxBytes();
  }
  BRAID_INFO("selection: %s (GPU)%s", tune::describeAllowed(allowed).c_str(),
             deterministic ? "; deterministic reductions in the in-order tree's order" : "");
  return Status::success();
}

}  // namespace braid
