// Config: every environment knob braid honours, read once when a
// communicator is created and logged at INFO. Nothing else reads getenv.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "braid/status.h"
#include "transport/net/ib/ib_settings.h"

namespace braid {

struct Config {
  int64_t timeoutMs = 600000;  ///< BRAID_TIMEOUT_MS: deadline of every blocking wait; 0 = none
  int nchannels = 1;           ///< BRAID_NCHANNELS
  bool nchannelsSet = false;  ///< BRAID_NCHANNELS was given (else GPU communicators pick their own)
  /// BRAID_MIN_NCHANNELS / BRAID_MAX_NCHANNELS (NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS), or
  /// ncclConfig_t's minCTAs / maxCTAs: bounds on the channels a GPU communicator picks
  /// (comm/gpu_channels.h); 0 = unset.
  int minChannels = 0;
  int maxChannels = 0;
  /// BRAID_CROSS_NIC (NCCL_CROSS_NIC): 0 and 2 keep each channel between hosts on one rail (the
  /// same NIC index on every host), 1 lets it leave by one NIC and enter by another
  /// (topology/search.h).
  int crossNic = 2;
  /// BRAID_PXN_DISABLE (NCCL_PXN_DISABLE) and BRAID_P2P_PXN_LEVEL (NCCL_P2P_PXN_LEVEL, 0..2):
  /// whether point-to-point sends between hosts take the peer's rail through an NVLink peer
  /// (topology/net_routes.h).
  bool pxnDisable = false;
  int p2pPxnLevel = 2;
  int64_t buffSize = 4 << 20;  ///< BRAID_BUFFSIZE: bytes of one FIFO (all its slots)
  /// BRAID_BUFFSIZE was given (else host communicators of one rank per host whose cores are
  /// oversubscribed take bigger FIFOs, Links::configure).
  bool buffSizeSet = false;
  std::string algo;           ///< BRAID_ALGO: empty = let braid choose
  std::string proto;          ///< BRAID_PROTO: empty = let braid choose
  std::string transports;     ///< BRAID_TRANSPORTS: comma-separated allow list; empty = all
  bool dumpSchedule = false;  ///< BRAID_DUMP_SCHEDULE
  /// BRAID_DETERMINISTIC: every reduction in one fixed order per element,
  /// whatever algorithm, protocol, channels and chunks run it.
  bool deterministic = false;
  std::string tracePath;     ///< BRAID_TRACE: write a Perfetto trace per rank there
  std::string topoFile;      ///< BRAID_TOPO_FILE: load the topology instead of discovering it
  std::string topoDumpFile;  ///< BRAID_TOPO_DUMP_FILE: write the topology used there
  std::string p2pLevel;      ///< BRAID_P2P_LEVEL: farthest path for cuda_ipc; empty = default
  int64_t spinUs = -1;  ///< BRAID_SPIN_US: microseconds a waiter polls before sleeping; -1 = auto
  /// BRAID_HOST_COMM: communicators run on host memory even where a GPU is
  /// current (CPU tensors, a faster Gloo), as on machines without one.
  bool hostComm = false;
  /// BRAID_HOSTID (NCCL_HOSTID): this process's host identity instead of its host name and boot
  /// id; ranks with different ones talk over the network even on one machine (the multi-host
  /// tests' network namespaces, containers that share a boot id).
  std::string hostIdOverride;
  /// BRAID_NET (NCCL_NET): the transport between hosts, "IB" or "Socket", or the name of a
  /// network plugin (transport/net/plugin); empty = a plugin where one loads, else IB wherever
  /// every rank has an active verbs port, else Socket.
  std::string net;
  /// BRAID_NET_PLUGIN (NCCL_NET_PLUGIN): the network plugins to try, as NCCL reads it
  /// (transport/net/plugin/net_plugin_loader.h); unset = libnccl-net.so, "none" = none.
  std::optional<std::string> netPlugin;
  /// BRAID_TUNER_PLUGIN (NCCL_TUNER_PLUGIN): the tuner plugin to load, as NCCL reads it
  /// (src/tune/plugin/tuner_loader.h); unset = libnccl-tuner.so, "none" = none.
  std::optional<std::string> tunerPlugin;
  /// BRAID_PROFILER_PLUGIN (NCCL_PROFILER_PLUGIN): the profiler plugin to load, as NCCL reads it
  /// (profiler/profiler_loader.h); unset = libnccl-profiler.so, "none" = none.
  std::optional<std::string> profilerPlugin;
  transport::ib::IbSettings ib;
  /// BRAID_CHECK_CALLS: ranks compare each collective call before moving data (comm/calls_check.cc)
  bool checkCalls = false;
  /// BRAID_HEARTBEAT_TIMEOUT_MS: a ring neighbour silent this long is lost (watch/peer_watch.h);
  /// 0 = only a closed connection tells. A dead process is seen at once either way.
  int64_t heartbeatTimeoutMs = 20000;
  /// BRAID_FLIGHT_RECORDER: a directory where each rank writes its flight recorder on an error,
  /// a lost peer and SIGUSR1 (src/flight); empty = no files (a timeout still goes to the log).
  std::string flightRecorderDir;
  int64_t flightRecorderEntries = 32;  ///< BRAID_FLIGHT_RECORDER_ENTRIES: calls kept
  /// BRAID_ZERO_COPY: large all_reduces on one host read peers' inputs in place and write their
  /// outputs (exec/zero_copy.h) where the kernel allows it and the result keeps its bits.
  /// 0: never; 1: buffers the ranks map (ncclMemAlloc's, threads'), and cross-memory copies of
  /// other buffers where they measured faster than the FIFOs; 2: cross-memory copies always.
  int zeroCopy = 1;
  /// BRAID_ZERO_COPY_MIN_BYTES: the smallest message that goes zero-copy. Set by hand;
  /// `braid-calibrate --zero-copy-only` measures it. On the 2-vCPU VM (2026-12-06,
  /// docs/benchmarks.md), 2 ranks: all_reduce's crossover at or below 4 KiB with a CPU per
  /// rank; with other work on the CPUs 128 KiB, all_gather's 4 MiB. It follows the load, so
  /// this stays between.
  int64_t zeroCopyMinBytes = 256 * 1024;
  /// BRAID_SYMMETRIC: all_reduce, all_gather and reduce_scatter on GPU communicators whose
  /// buffers lie in symmetric windows (ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC) run
  /// the symmetric kernels, which load and store the peers' windows (kernels/engine/
  /// symmetric.h). 0: never; 1: where the cost model prefers them (tune/symmetric_cost.h);
  /// 2: always where the windows allow.
  int symmetric = 1;
  /// BRAID_SYMMETRIC_ALGO: "oneshot" or "twoshot" forces that all_reduce kernel (an in-place
  /// call runs two-shot whatever is asked: symmetric.h); empty: the cost model's.
  std::string symmetricAlgo;
  /// BRAID_STREAM_SLOTS: how a host rank writes the FIFO slots it sends (exec/host_executor.cc).
  /// 1: with non-temporal stores, for slices of 64 KiB and more, so the reader loads them from
  /// memory rather than probing the writer's cache; 0: plain stores; -1 (auto): chosen call by
  /// call from what calls measure (tune/slot_stores.h), starting streamed where a cache line
  /// measured far between the host's CPUs (base/line_latency.h).
  int streamSlots = -1;
  /// BRAID_SOCKET_IFNAME (NCCL_SOCKET_IFNAME): the interfaces the network may use (base/
  /// ifname_filter.h); where it matches several, the socket transport spreads its channels over
  /// them (comm/network.h). Empty: unset, the bootstrap's interface alone.
  std::string socketIfname;
  int socketThreads = 1;     ///< BRAID_SOCKET_NTHREADS: threads per socket FIFO end (striping)
  int socketsPerThread = 1;  ///< BRAID_NSOCKS_PERTHREAD: connections per such thread  ///<
                             ///< BRAID_IB_* (transport/net/ib/ib_settings.h)

  /// Reads the environment (BRAID_X, then NCCL_X).
  static Config fromEnvironment();
  /// Rejects values braid cannot honour, with a message naming the variable.
  Status validate() const;
  /// One line per knob, for the INFO log.
  std::string describe() const;
  /// Whether BRAID_TRANSPORTS allows the transport called `name`.
  bool transportAllowed(const std::string& name) const;
  /// Whether BRAID_TRANSPORTS allows the socket transport ("socket" or "net"), and verbs
  /// ("ibverbs" or "net").
  bool socketAllowed() const { return transportAllowed("socket") || transportAllowed("net"); }
  bool verbsAllowed() const { return transportAllowed("ibverbs") || transportAllowed("net"); }
};

}  // namespace braid
