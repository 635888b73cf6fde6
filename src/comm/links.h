// Links: the host FIFOs a communicator's schedules and point-to-point transfers run on.
//
// It owns the FIFOs' geometry (channels, slot sizes, how long a waiter polls), the names they
// are made under (nonces), every FIFO end made so far (by peer, channel and protocol for the
// schedules; by peer for point-to-point), the names of shared segments still to unlink, and
// the one-shot all-reduce's board. Within a host the ends are shm FIFOs; to another host,
// network FIFOs (comm/network.h). GPU communicators keep only the geometry, nonces and segment
// names here: their FIFOs are the GPU side's (comm/gpu_side.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "algo/schedule.h"
#include "braid/status.h"
#include "comm/health.h"
#include "comm/members.h"
#include "comm/network.h"
#include "comm/selector.h"
#include "config.h"
#include "exec/host_executor.h"
#include "exec/one_shot.h"
#include "exec/p2p_executor.h"
#include "exec/program.h"
#include "exec/zero_copy.h"
#include "transport/connection.h"

namespace braid::comm {

/// A connection the algorithms' schedules use: the FIFO to or from `peer`
/// on `channel` with `protocol`.
struct LinkKey {
  int peer;
  int channel;
  algo::Protocol protocol;
  bool operator<(const LinkKey& o) const {
    return std::tie(peer, channel, protocol) < std::tie(o.peer, o.channel, o.protocol);
  }
};

/// FIFOs for point-to-point have a quarter of the schedules' slot size, on the host and on a
/// GPU: every pair that talks gets one, so an all-to-all of N ranks makes N(N-1) of them.
inline constexpr size_t kP2pSlotDivisor = 4;

class Links {
 public:
  Links(const Config& config, const Members& members, const Health& health, Network& network)
      : config_(config), members_(members), health_(health), network_(network) {}
  /// Unlinks the names of receiving ends whose sender never came.
  ~Links();
  Links(const Links&) = delete;
  Links& operator=(const Links&) = delete;

  /// The channels every call runs on.
  int nchannels() const { return nchannels_; }
  /// GPU communicators: the channels their device allows (GpuSide::chooseChannels).
  void useChannels(int nchannels) { nchannels_ = nchannels; }
  /// Simple FIFO slots' bytes; LL ones are llSlotBytes().
  size_t slotBytes() const { return slotBytes_; }
  /// Whether the executor writes the slots it sends with non-temporal stores (chooseSlotStores).
  bool streamSlots() const { return streamSlots_; }
  /// What names the schedules' FIFOs, and the point-to-point ones.
  uint64_t linkNonce() const { return linkNonce_; }
  uint64_t p2pNonce() const { return p2pNonce_; }
  /// The one-shot all-reduce's board (null with one rank, on a GPU, or when not allowed).
  exec::OneShotBoard* oneShot() const { return oneShot_.get(); }
  /// The zero-copy all-reduce's board: ranks on one host of a host communicator, unless
  /// BRAID_ZERO_COPY=0; null otherwise. It may exist and not be usable (board->usable()).
  exec::ZeroCopyBoard* zeroCopy() const { return zeroCopy_.get(); }

  /// The geometry and names of every FIFO (BRAID_NCHANNELS, BRAID_BUFFSIZE, BRAID_SPIN_US),
  /// once the peers are known; says them at INFO.
  void configure(tune::Model& model);
  /// A host communicator's ring: its Simple FIFOs now, so that a communicator that cannot get
  /// shared memory fails at creation (the others come with their first use), and the one-shot
  /// board where the selector's `settings` allow it, noted there.
  Status connectRing(SelectorSettings& settings);
  /// Decides streamSlots: as BRAID_STREAM_SLOTS says, or else from how far a cache line travels
  /// between the host's CPUs, measured once per host and shared (a bootstrap allGather).
  Status chooseSlotStores();
  size_t llSlotBytes() const;
  /// What a wait of this communicator watches: its deadline, the stop flag, the spin.
  transport::WaitContext waitContext() const;
  /// Fills `out` with the connections behind every port of `program`, making
  /// the missing ones: first every receiving end, then every sending end
  /// (each waits for its receiver to have made its end), so ranks making
  /// connections at the same time cannot wait on each other in a cycle.
  Status linkSchedule(const exec::Program& program, algo::Protocol protocol,
                      std::vector<exec::ChannelConnections>* out);
  /// Runs a batch of point-to-point transfers on the p2p FIFOs (p2p_links.cc), noting its waits
  /// in `waits`.
  Status runP2p(const std::vector<exec::P2pTask>& tasks, kernels::engine::WaitRecord* waits);
  /// A shared segment this rank made, to unlink at destruction unless its opener does first.
  void noteSegment(const std::string& name) { madeSegments_.push_back(name); }
  /// A call starts: the network proxy, if any, is to poll at once (Network::expectTraffic).
  void expectTraffic() const { network_.expectTraffic(); }

 private:
  int nchannels_ = 1;
  size_t slotBytes_ = 0;        ///< Simple FIFO slots; LL ones are llSlotBytes()
  uint32_t spinNs_ = 0;         ///< how long a waiter polls before it sleeps
  bool corePerThread_ = false;  ///< the host's cores outnumber its ranks' threads
  /// The executor writes the slots it sends with non-temporal stores (BRAID_STREAM_SLOTS;
  /// chooseSlotStores): forced, or the first choice of Calls' SlotStores.
  bool streamSlots_ = false;
  uint64_t linkNonce_ = 0;  ///< names the schedules' FIFOs
  uint64_t p2pNonce_ = 0;   ///< names the point-to-point FIFOs
  std::unique_ptr<exec::OneShotBoard> oneShot_;
  std::unique_ptr<exec::ZeroCopyBoard> zeroCopy_;

  class P2pEnds;  // exec::P2pLinks over p2pRecv_ and p2pSend_ (p2p_links.cc)

  /// The zero-copy board (connectRing), saying at INFO where it cannot take calls.
  Status makeZeroCopyBoard();
  /// linkSchedule's steps for a peer on this host: the receiving end of (`channel`, `peer`)
  /// made, and the sending end opened once its receiver has made it (within `wait`).
  Status makeShmRecvEnd(int channel, int peer, algo::Protocol protocol);
  Status openShmSendEnd(int channel, int peer, algo::Protocol protocol,
                        const transport::WaitContext& wait);

  const Config& config_;
  const Members& members_;
  const Health& health_;
  Network& network_;
  std::map<LinkKey, std::unique_ptr<transport::RecvEnd>> recvLinks_;
  std::map<LinkKey, std::unique_ptr<transport::SendEnd>> sendLinks_;
  /// Point-to-point FIFOs, made the first time a pair needs them: by peer rank.
  std::vector<std::unique_ptr<transport::RecvEnd>> p2pRecv_;
  std::vector<std::unique_ptr<transport::SendEnd>> p2pSend_;
  std::vector<std::string> madeSegments_;  ///< receiving ends' names, for cleanup
};

}  // namespace braid::comm
