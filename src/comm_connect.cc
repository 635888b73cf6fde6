// Connecting a communicator's ring over shared memory.
//
// Each rank creates the FIFO it receives on (it owns its incoming buffer),
// all ranks meet at a barrier, each opens the FIFO it sends on, and after a
// second barrier the receivers unlink the names: from then on the segments
// live only as mappings, so nothing is left in /dev/shm if a rank dies.
#include <algorithm>
#include <cstdint>
#include <string>

#include "comm_impl.h"
#include "topology/host_id.h"
#include "transport/shm/shm_fifo.h"
#include "util/log.h"

namespace braid {
namespace {

// With a core per rank, a waiter polls long enough to cover a peer's copy of
// a FIFO slot (a few tens of microseconds) before paying for a futex sleep
// and wake. With more ranks than cores it does not poll at all: the rank it
// waits for may need this very core, and yielding it (util/futex.h) hands
// it over at once. Measured with 4 ranks on 2 cores, 8 B all_reduce: 14 us
// with no polling, 30 us with 2 us of polling, 90 us with 20 us.
constexpr uint32_t kSpinNsDedicated = 100000;
constexpr uint32_t kSpinNsShared = 0;

}  // namespace

Status Comm::Impl::connectRing() {
  ring.resize(nranks);
  for (int r = 0; r < nranks; ++r) ring[r] = r;
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

  std::string ringText;
  for (int r : ring) ringText += " " + std::to_string(r);
  BRAID_INFO(
      "ring:%s; %zu channel(s); transport shm for all peers; fifo %d x %zu bytes; "
      "spin %u ns (%d cores)",
      ringText.c_str(), static_cast<size_t>(config.nchannels), transport::kFifoSlots, slotBytes,
      spinNs, cores);

  channels.resize(config.nchannels);
  connections.assign(config.nchannels, exec::ChannelConnections{});
  if (nranks == 1) return Status::success();
  if (!config.transportAllowed("shm")) {
    return invalidUsage("BRAID_TRANSPORTS=" + config.transports +
                        " excludes shm, the only transport implemented for ranks on one host");
  }
  const int prev = ring[(rank - 1 + nranks) % nranks];
  const int next = ring[(rank + 1) % nranks];
  const uint64_t nonce = peers[0].nonce ^ bootstrap->magic();
  p2pNonce = nonce ^ 0x7032707032703270ull;  // point-to-point FIFOs get names of their own
  for (int c = 0; c < config.nchannels; ++c) {
    auto name = transport::shm::segmentName(nonce, prev, rank, c);
    BRAID_ASSIGN_OR_RETURN(channels[c].fromPrev, transport::shm::createRecvEnd(name, slotBytes));
  }
  BRAID_TRY(bootstrap->barrier());
  for (int c = 0; c < config.nchannels; ++c) {
    auto name = transport::shm::segmentName(nonce, rank, next, c);
    BRAID_ASSIGN_OR_RETURN(channels[c].toNext, transport::shm::openSendEnd(name, slotBytes));
  }
  BRAID_TRY(bootstrap->barrier());
  for (int c = 0; c < config.nchannels; ++c) {
    BRAID_TRY(transport::shm::unlinkSegment(transport::shm::segmentName(nonce, prev, rank, c)));
    connections[c].send.assign(nranks, nullptr);
    connections[c].recv.assign(nranks, nullptr);
    connections[c].send[next] = channels[c].toNext.get();
    connections[c].recv[prev] = channels[c].fromPrev.get();
  }
  return Status::success();
}

}  // namespace braid
