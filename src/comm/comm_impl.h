// Comm::Impl: the state behind braid::Comm (include/braid/comm.h), as a few parts with one job
// each. Each part's header says what it owns; Comm's methods (src/comm/*.cc) are short and
// hand the work to the part whose job it is.
//
//   Members   who the ranks are and where they run: bootstrap, peers, hosts, topology, ring
//   Health    whether the communicator may still be used: stop flags, abort, revoke, broken,
//             the count of running calls, the peer watch and the wording of a lost rank
//   Recorder  the flight recorder and BRAID_TRACE
//   Network   the ranks on other hosts: listener, addresses, verbs or sockets
//   Links     the host FIFOs: their geometry and names, schedule and point-to-point FIFOs, the
//             one-shot board
//   Selector  which algorithm and protocol run a call
//   Calls     a call from its check to its last store: schedules, operators, the host run,
//             the GPU enqueue, point-to-point batches
//   GpuSide   a GPU communicator's device, stream, kernel words, GPU FIFOs and launches
//
// They are made in that order, each given the parts it uses, and go in the reverse order,
// after the watcher (whose thread reaches Health, Recorder and GpuSide) has stopped.
#pragma once

#include <memory>
#include <string>

#include "braid/comm.h"
#include "comm/call.h"
#include "comm/calls.h"
#include "comm/gpu_side.h"
#include "comm/health.h"
#include "comm/host_shares.h"
#include "comm/links.h"
#include "comm/members.h"
#include "comm/network.h"
#include "comm/recorder.h"
#include "comm/registrations.h"
#include "comm/selector.h"
#include "comm/windows.h"
#include "config.h"
#include "gpu/metered_runtime.h"

namespace braid {

class Comm::Impl {
 public:
  /// Rank `rank` of `nranks` on `device` (-1: host memory), in the communicator named `name`.
  Impl(Config c, int rank, int nranks, std::string name, int device)
      : config(std::move(c)), members(rank, nranks, std::move(name), device) {}
  /// Stops SIGUSR1's dumps and the watcher first: the dump reads the GPU's wait records, and the
  /// watcher's thread calls onPeerLost, which reaches the other parts.
  ~Impl() {
    recorder.forgetFlight();
    health.stopWatching();
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  Config config;
  comm::Members members;
  comm::Health health{members};
  comm::Recorder recorder{config, members, health};
  comm::Network network{config, members, health};
  comm::Links links{config, members, health, network};
  /// The selector's settings while the communicator is made; the selector, once it is.
  comm::SelectorSettings choosing;
  std::unique_ptr<comm::Selector> selector;
  /// A GPU communicator's device memory is all allocated through this meter, which counts it;
  /// before Calls and the GPU side, whose device programs and FIFOs free through it.
  std::unique_ptr<gpu::MeteredRuntime> gpuMemory;
  comm::Calls calls{config, members, health, recorder, links};
  /// Null on host communicators. After Calls, which points at it: it goes first.
  std::unique_ptr<comm::GpuSide> gpu;
  /// ncclCommRegister's.
  comm::Registrations registrations;
  /// A GPU communicator's symmetric memory windows (null on host communicators). After the GPU
  /// side, whose runtime releases them: it goes first.
  std::unique_ptr<comm::Windows> windows;
  /// Device communicators' memory shared across the host (Comm::shareAcrossHost). Declared after
  /// the GPU side and the metered runtime it is freed through, so it goes before them.
  comm::HostShares hostShares;

  /// Around a call that may set this communicator's device: the caller's current device stays
  /// as it was (gpu::DeviceGuard); nothing on a host communicator.
  gpu::DeviceGuard keepCallersDevice() const {
    return gpu::DeviceGuard(members.cudaDevice >= 0 ? &gpu::runtime() : nullptr,
                            members.cudaDevice);
  }
  /// After the bootstrap joined: the watch, the peers, the topology, the FIFOs (comm.cc).
  Status finishCreate();
  /// What a lost peer does to this communicator: every wait ends (on the watcher's thread).
  void onPeerLost(const watch::Loss& loss);
  /// Stops what runs (calls in other threads, kernels) and waits until it has (revoke, shrink
  /// with NCCL_SHRINK_ABORT): until `ownCalls` calls are left, the caller's own. The stop flag
  /// stays raised when `keepStopped` or a peer is lost.
  Status quiesce(bool keepStopped, int ownCalls);
  /// Creates a child communicator (split, grow, shrink) where this one runs, with the channel
  /// bounds and name of `child`; abort() stops its creation too.
  Result<std::unique_ptr<Comm>> createChild(const UniqueId& id, int childRanks, int childRank,
                                            const CommOptions& child);

 private:
  /// The FIFOs' geometry, the ring's FIFOs and the one-shot board, or the GPU side; then the
  /// selector, from what they settled (connect.cc).
  Status connect();
  /// A GPU communicator's part of connect: its side, channels and one-shot boards.
  Status connectGpu();
  /// The cost model's hops between hosts fitted to the rings planned across them
  /// (tune::Model::fitNetwork), said at INFO; nothing on one host.
  void fitNetwork();
};

}  // namespace braid
