// The cost model: how long one collective call takes, predicted from a few
// figures per transport and protocol, so that the selector (select.h) can
// pick the fastest algorithm and protocol and braid-sim can time machines
// braid has never run on.
//
// Every algorithm is a pipeline of hops between ranks. A hop costs a fixed
// latency (handing a message over: a flag written, a peer woken) and its
// bytes over a bandwidth. A call then costs
//
//   callUs                                          (enqueue, schedule lookup)
//   + repeats * (intraHops * L_intra + interHops * L_inter) * scale.latency
//   + busBytes / (min(B_intra, B_inter used) * scale.bandwidth)
//
// where the hop counts and busBytes are the CostShape of the algorithm
// (costShape below; docs/tuning.md derives each), L and B the LinkCost of
// the transport and protocol, scale the algorithm's HopScale (1 for the
// ring, by definition), and repeats the number of channels when channels
// run one after another (the host executor), 1 when they run in parallel.
// The one-shot all-reduce has its own three figures per protocol (OneShotCost).
//
// Simplifications, each documented in docs/tuning.md: the pipeline's fill
// (a chunk crossing every hop before the bandwidth regime starts) is folded
// into the hop latency; ranks are spread evenly over hosts, numbered host by
// host; a hop that crosses hosts is as slow as the network, whatever else
// shares the NIC.
#pragma once

#include <cstddef>
#include <optional>

#include "algo/algorithm.h"
#include "braid/status.h"
#include "braid/types.h"

namespace braid::tune {

/// One hop between two ranks: a message of b bytes takes latencyUs + b / bandwidth.
struct LinkCost {
  double latencyUs = 0;     ///< fixed cost of one hop on the critical path
  double bandwidthGBs = 0;  ///< 1e9 bytes/s one rank pushes to its successor, all channels together
};

/// What an algorithm's hop costs relative to a ring hop over the same link
/// (a tree node handles two children, which a ring rank never does).
struct HopScale {
  double latency = 1;    ///< multiplies the link's latency
  double bandwidth = 1;  ///< multiplies the link's bandwidth
};

/// The one-shot all-reduce: every rank publishes its input, reads the input
/// of each of its N-1 peers and reduces them.
struct OneShotCost {
  double baseUs = 0;     ///< publishing and the final synchronisation
  double perPeerUs = 0;  ///< waiting for one more peer's input to be ready
  double readGBs = 0;    ///< rate at which a rank reads and reduces a peer's input
};

/// The figures of one machine. Host-memory figures come from braid-calibrate
/// (calibratedDefaults); braid-sim fills them for GPU machines it models.
struct Model {
  /// Hops between ranks of one host, per protocol, while every rank has a
  /// CPU of its own (or on GPUs, where hostCores is 0).
  LinkCost intraHost[algo::kNumProtocols];
  /// Hops between ranks of one host when more ranks than hostCores share its
  /// CPUs: a hop then waits for the receiver to be scheduled.
  LinkCost intraHostShared[algo::kNumProtocols];
  /// Hops between hosts (the network), per protocol: what all of a rank's channels move across
  /// hosts together. fitNetwork sets it from the machine's plan where there is one.
  LinkCost interHost[algo::kNumProtocols];
  /// Whether interHost's Simple bandwidth was measured (braid's socket transport,
  /// bench/calibrate-net.sh), so that a faster network in the plan does not raise it: the CPUs'
  /// copies may be the narrower pipe. Else it is a placeholder that the plan replaces.
  bool interHostMeasured = false;
  /// The tree's hop relative to the ring's, per protocol.
  HopScale tree[algo::kNumProtocols];
  /// The one-shot all-reduce, per protocol (Simple publishes a counter after
  /// the data, LL flags every 8-byte line).
  OneShotCost oneShot[algo::kNumProtocols];
  /// The same when more ranks than hostCores share the host's CPUs: a rank
  /// then waits for each peer to be scheduled before it can read its input.
  OneShotCost oneShotShared[algo::kNumProtocols];
  /// A point-to-point batch's hop (ncclSend/ncclRecv groups, gather,
  /// scatter, all-to-all) while every rank has a CPU of its own: the
  /// point-to-point executor keeps every transfer of a batch in flight and
  /// runs only Simple, so its hop is neither a ring hop nor per protocol.
  /// Unset (bandwidth 0): intraHost[kSimple] stands in.
  LinkCost p2p;
  /// The same when more ranks than hostCores share the host's CPUs; unset:
  /// intraHostShared[kSimple] stands in.
  LinkCost p2pShared;
  /// Fixed cost of any call that moves data, whatever the algorithm.
  double callUs = 0;
  /// Multiplies the time of a call in deterministic mode (BRAID_DETERMINISTIC), per algorithm.
  double deterministicSlowdown[algo::kNumAlgorithms] = {1, 1, 1};
  /// CPUs the ranks of one host share; 0 means every rank has its own engine
  /// (a GPU), so intraHostShared is never used. The communicator sets it to
  /// the CPUs it may run on: it is a fact of the machine, not a calibration.
  int hostCores = 0;
  /// Whether a rank's channels run at the same time. The host executor runs
  /// them one after another, so there each channel pays its own hop
  /// latencies and more channels add no bandwidth; GPU kernels run a block
  /// per channel in parallel.
  bool channelsParallel = false;
  /// Most bytes/s one channel moves (a GPU block, or one CPU thread), per
  /// protocol, in GB/s; 0 means no limit beyond the link's. With parallel
  /// channels a hop's bandwidth is min(link, nchannels * channelGBs).
  double channelGBs[algo::kNumProtocols] = {0, 0};

  /// The hops between hosts fitted to the machine: `ringGBs` is what the planned rings move in
  /// all (topology::RingPlan::totalGBs: each channel on what the ones before it left of every
  /// link, the NICs' speeds included), as NCCL takes its channels times the ring's speed.
  /// Simple's bandwidth becomes it, or the measured figure where that is lower; every other
  /// protocol keeps its proportion to Simple. Unchanged where `ringGBs` is not positive (no
  /// plan, or one host).
  void fitNetwork(double ringGBs);
  /// The hops between hosts take at least `us` microseconds, every protocol: the latency a
  /// network plugin reports for its device. Unchanged where `us` is not positive.
  void fitNetworkLatency(double us);

  /// The figures braid-calibrate measured for the shm transport on the
  /// development VM; docs/tuning.md says how and which are still provisional.
  static Model calibratedDefaults();
  /// The figures GPU communicators choose by: provisional until measured on
  /// a GPU (gpu_defaults.cc says where they come from).
  static Model gpuDefaults();
};

/// One call whose time is to be predicted.
struct Query {
  Collective collective = Collective::kAllReduce;
  /// The size nccl-tests prints: the buffer of all_reduce, broadcast and
  /// reduce; the whole gathered (all_gather) or scattered (reduce_scatter)
  /// buffer, that is nranks times the per-rank block.
  size_t bytes = 0;
  int nranks = 1;
  int nhosts = 1;  ///< hosts the ranks spread over, evenly, numbered host by host
  int nchannels = 1;
  bool deterministic = false;  ///< BRAID_DETERMINISTIC: a fixed reduction order
};

/// What an algorithm does for one call, independent of any machine: the
/// quantities the model multiplies its figures by.
struct CostShape {
  double intraHops = 0;       ///< hop latencies on the critical path within a host
  double interHops = 0;       ///< hop latencies on the critical path between hosts
  double busBytes = 0;        ///< bytes the busiest rank pushes through the pipeline
  bool crossesHosts = false;  ///< whether the pipeline's bandwidth is capped by the network
  int peers = 0;              ///< one-shot only: peers whose input each rank reads
  double peerBytes = 0;       ///< one-shot only: bytes read from each peer
};

/// Whether `algorithm` can run `collective` at all (one-shot: all_reduce on
/// one host; tree: all_reduce, broadcast, reduce; ring: all five).
bool supports(algo::Algorithm algorithm, const Query& query);

/// Depth in hops of the in-order binary tree over n ranks (algo/tree.h):
/// ceil(log2 n), 0 for one rank.
int treeDepth(int n);

/// The shape of `query` under `algorithm`; an error when the query is
/// malformed or the algorithm cannot run the collective.
Result<CostShape> costShape(const Query& query, algo::Algorithm algorithm);

/// Predicted microseconds of one call; an error when the query is malformed
/// or the algorithm cannot run the collective.
Result<double> predictUs(const Model& model, const Query& query, algo::Algorithm algorithm,
                         algo::Protocol protocol);

/// One rank's batch of sends and receives, which the point-to-point executor
/// advances all at once (ncclSend/ncclRecv in a group, and the gather,
/// scatter and all-to-all built on them).
struct P2pQuery {
  size_t sendBytes = 0;  ///< bytes this rank sends to other ranks, all peers together
  size_t recvBytes = 0;  ///< bytes it receives from other ranks
  size_t selfBytes = 0;  ///< bytes it sends to itself (a copy, no hop)
  int nranks = 1;
  int nhosts = 1;             ///< as in Query: decides whether ranks share CPUs
  bool crossesHosts = false;  ///< whether some peer of the batch is on another host
};

/// Predicted microseconds of a batch: one hop latency (every transfer is in
/// flight at once), the busier direction over the hop's bandwidth (a rank
/// sends and receives at the same time), and the self-copy at the copy
/// rate. The hop is Model::p2p (p2pShared when ranks share CPUs) where set,
/// else the ring's Simple hop; across hosts it is no faster than the
/// network's. docs/tuning.md says how braid-calibrate measures p2p.
Result<double> predictP2pUs(const Model& model, const P2pQuery& query);

/// One candidate of a comparison: an algorithm with a protocol.
struct Candidate {
  algo::Algorithm algorithm;
  algo::Protocol protocol;
};

/// The size in bytes at which `a` and `b` take the same predicted time for
/// `query` (whose `bytes` is ignored), when there is one above 1 byte: below
/// it the candidate with the smaller fixed cost is faster, above it the one
/// with the larger bandwidth. Predictions are affine in the size, so this is
/// where two lines meet. Empty when one candidate is never slower.
Result<std::optional<double>> crossoverBytes(const Model& model, Query query, Candidate a,
                                             Candidate b);

}  // namespace braid::tune
