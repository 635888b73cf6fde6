// The state behind braid::Comm (include/braid/comm.h).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "algo/algorithm.h"
#include "algo/schedule.h"
#include "base/trace.h"
#include "bootstrap/bootstrap.h"
#include "braid/comm.h"
#include "config.h"
#include "exec/host_executor.h"
#include "exec/one_shot.h"
#include "exec/p2p_executor.h"
#include "exec/program.h"
#include "flight/flight_recorder.h"
#include "gpu_state.h"
#include "kernels/host_reduce.h"
#include "topology/graph.h"
#include "transport/connection.h"
#include "transport/net/ib/ib_fifo_pump.h"
#include "transport/net/socket_fifo.h"
#include "transport/net/socket_rendezvous.h"
#include "tune/select.h"
#include "watch/peer_watch.h"

namespace braid {

/// What every rank tells the others at creation (bootstrap allGather).
struct PeerInfo {
  int32_t rank;
  int32_t pid;
  uint64_t hostId;
  uint64_t nonce;  ///< random; rank 0's names this communicator's shm segments
  int32_t cudaDevice;
  /// The NUMA node of the CPU node holding every CPU this rank may run on
  /// (topology/cpu_affinity.h); -1 when unpinned or unknown.
  int32_t numaId;
};

/// A connection the algorithms' schedules use: the FIFO to or from `peer`
/// on `channel` with `protocol` (comm_links.cc).
struct LinkKey {
  int peer;
  int channel;
  algo::Protocol protocol;
  bool operator<(const LinkKey& o) const {
    return std::tie(peer, channel, protocol) < std::tie(o.peer, o.channel, o.protocol);
  }
};

// Counts a call as running for Comm::abort() (declared first in a call, so
// it is released last, after the call's final write to the communicator).
class ActiveCall {
 public:
  explicit ActiveCall(std::atomic<int>& count) : count_(count) { count_.fetch_add(1); }
  ~ActiveCall() { count_.fetch_sub(1); }
  ActiveCall(const ActiveCall&) = delete;
  ActiveCall& operator=(const ActiveCall&) = delete;

 private:
  std::atomic<int>& count_;
};

/// The checks every communicator call shares, with the same messages.
inline Status checkDataType(DataType type) {
  const int t = static_cast<int>(type);
  if (t < 0 || t >= kNumDataTypes) return invalidArgument("unknown datatype " + std::to_string(t));
  return Status::success();
}

/// `what` (a root, a peer) must name a rank of a communicator of `nranks`.
inline Status checkRank(int value, int nranks, const char* what) {
  if (value < 0 || value >= nranks) {
    return invalidArgument(std::string(what) + " " + std::to_string(value) + " is outside [0, " +
                           std::to_string(nranks) + ")");
  }
  return Status::success();
}

/// An operator as the kernels apply it: the functors of `functor` (a user
/// op becomes kPreMulSum) with `args`; a premulsum scalar given by device
/// pointer is read from `scalarPointer` when the kernel runs.
struct OpSpec {
  RedOp functor = RedOp::kSum;
  kernels::OpArgs args;
  const void* scalarPointer = nullptr;
};

/// A premulsum operator made by ncclRedOpCreatePreMulSum.
struct UserOp {
  DataType type = DataType::kFloat32;
  bool byPointer = false;                  ///< read the scalar at each call (ncclScalarDevice)
  const void* pointer = nullptr;           ///< where, when byPointer
  alignas(8) unsigned char value[8] = {};  ///< the scalar, when given by value
};

/// What the selector's answer for one call depends on beyond the communicator's fixed state.
struct ChoiceKey {
  Collective collective = Collective::kAllReduce;
  size_t bytes = 0;             ///< tune::Query::bytes (from the largest block when variable)
  bool variableCounts = false;  ///< blockCounts given: only the ring runs it
  bool operator==(const ChoiceKey& o) const {
    return collective == o.collective && bytes == o.bytes && variableCounts == o.variableCounts;
  }
};

/// The selector's answers for the last few distinct calls, most recent first.
/// tune::choose runs the cost model for every allowed (algorithm, protocol),
/// 70-250 ns per call on the development VM, against a few microseconds for a
/// whole small all_reduce; a training step repeats a handful of sizes, so a
/// short list scanned in order finds them (9-40 ns, braid-select-bench).
class ChoiceCache {
 public:
  static constexpr size_t kEntries = 8;

  /// The answer kept for `key`, which becomes the most recent; nullptr when none is.
  const tune::Choice* find(const ChoiceKey& key) {
    for (size_t i = 0; i < size_; ++i) {
      if (!(entries_[i].key == key)) continue;
      std::rotate(entries_.begin(), entries_.begin() + i, entries_.begin() + i + 1);
      return &entries_[0].choice;
    }
    return nullptr;
  }

  /// Keeps `choice` as the most recent answer, dropping the oldest when full.
  void insert(const ChoiceKey& key, const tune::Choice& choice) {
    if (size_ < kEntries) ++size_;
    std::rotate(entries_.begin(), entries_.begin() + size_ - 1, entries_.begin() + size_);
    entries_[0] = {key, choice};
  }

  size_t size() const { return size_; }

 private:
  struct Entry {
    ChoiceKey key;
    tune::Choice choice;
  };
  std::array<Entry, kEntries> entries_{};
  size_t size_ = 0;
};

class Comm::Impl {
 public:
  Config config;
  int rank = 0;
  int nranks = 1;
  std::unique_ptr<bootstrap::Bootstrap> bootstrap;
  std::vector<PeerInfo> peers;
  std::vector<int> ring;  ///< ring order of ranks
  /// Ranks on other hosts (PeerInfo::hostId differs) are reached through the network: this
  /// rank's listener and every rank's listener address, both empty when all ranks share one host
  /// (comm_network.cc), and the verbs transport where every rank has a port (else the socket
  /// transport carries the FIFOs). Declared before every FIFO end, which go first.
  std::unique_ptr<transport::net::SocketRendezvous> net;
  std::vector<sockaddr_storage> netAddresses;
  std::unique_ptr<transport::ib::IbNetwork> ib;
  bool onOtherHost(int peer) const { return onOtherHostThan(peer, rank); }
  bool onOtherHostThan(int a, int b) const { return peers[a].hostId != peers[b].hostId; }
  /// Each rank's host, hosts numbered in the order of their first ranks (comm_network.cc).
  std::vector<int> hostNumbers() const;
  /// Whether FIFOs of `protocol` to and from these (channel, peer) pairs may be made: only the
  /// Simple protocol crosses hosts.
  Status checkCrossesHosts(algo::Protocol protocol, const std::set<std::pair<int, int>>& recv,
                           const std::set<std::pair<int, int>>& send) const;
  /// A communicator across hosts: every rank's host graph through the bootstrap, joined into
  /// `machine` (left empty when a rank has none); `hostOf` is each rank's host in it
  /// (comm_topology.cc).
  Status exchangeTopology(std::vector<int>* hostOf);
  bool spansHosts() const { return net != nullptr; }
  /// Joins the network: the listener, the exchange of addresses, the choice of transport.
  Status connectNetwork();
  /// Opens the verbs transport if every rank can; keeps sockets otherwise (comm_network.cc).
  Status chooseNetTransport();
  /// This rank's place among the ranks of its host.
  int localRank() const;
  /// What waits for the connection that opens with `greeting` (on a proxy's thread), and the
  /// connection to `peer`'s listener that opens with it.
  transport::net::SocketConnector socketConnector(const transport::net::Greeting& greeting) const;
  Result<braid::net::Socket> connectSocket(int peer, const transport::net::Greeting& greeting);
  /// The same as a verbs proxy takes it: at once, if it has arrived.
  transport::ib::IbRecvPump::SocketTaker socketTaker(
      const transport::net::Greeting& greeting) const;
  /// A striped socket FIFO's connections (config's BRAID_SOCKET_NTHREADS x NSOCKS_PERTHREAD).
  transport::net::StripeLayout stripeLayout() const;
  Result<std::vector<braid::net::Socket>> connectStripes(int peer,
                                                         const transport::net::Greeting& greeting);
  transport::net::StripeConnector stripeConnector(const transport::net::Greeting& greeting) const;
  /// A network FIFO's ends, over verbs or sockets: the receiving one never waits for its
  /// connection (its proxy does).
  Result<std::unique_ptr<transport::RecvEnd>> awaitNetworkFifo(
      int peer, const transport::net::Greeting& greeting, size_t slotBytes);
  Result<std::unique_ptr<transport::SendEnd>> connectNetworkFifo(
      int peer, const transport::net::Greeting& greeting, size_t slotBytes);
  /// The same for a GPU communicator: a GPU FIFO in pinned host memory named `name`, with the
  /// kernel's cursor and (sending) the one its receiving side needs.
  Result<std::unique_ptr<transport::cuda_ipc::GpuRecvEnd>> awaitGpuNetworkFifo(
      int peer, const transport::net::Greeting& greeting, const std::string& name, size_t slot,
      kernels::engine::FifoCursor* cursor);
  Result<std::unique_ptr<transport::cuda_ipc::GpuSendEnd>> connectGpuNetworkFifo(
      int peer, const transport::net::Greeting& greeting, const std::string& name, size_t slot,
      kernels::engine::FifoCursor* cursor, kernels::engine::FifoCursor* proxyCursor);

  int nchannels = 1;
  size_t slotBytes = 0;  ///< Simple FIFO slots; LL ones are llSlotBytes()
  uint32_t spinNs = 0;
  /// ncclCommAbort was called (the stop flag below is raised with it).
  std::atomic<bool> aborted{false};
  /// What every wait of this communicator watches (WaitContext::abort, the deadlines of the
  /// bootstrap and of creation): raised by abort(), revoke(), a caller abandoning a creation
  /// (CommOptions::stop), and the watcher when a peer is lost. Shared so that the handle of a
  /// creation still running can raise it.
  std::shared_ptr<std::atomic<bool>> stop = std::make_shared<std::atomic<bool>>(false);
  /// ncclCommRevoke was called: only destroy, split and shrink are left.
  std::atomic<bool> revoked{false};
  /// The GPU's abort word once the GPU state exists, for the watcher's thread (which must not
  /// touch `gpu` itself while creation may still be making it).
  std::atomic<uint32_t*> gpuAbortWord{nullptr};
  /// Creates a child communicator (split, shrink) where this one runs; abort() stops its
  /// creation too.
  Result<std::unique_ptr<Comm>> createChild(const UniqueId& id, int childRanks, int childRank);
  /// Children being created by split() or shrink(): abort() stops their creation too.
  std::mutex childrenMutex;
  std::vector<std::shared_ptr<std::atomic<bool>>> childStops;
  /// Calls now running on this communicator; abort() waits for them to
  /// leave before the caller may free the communicator.
  std::atomic<int> activeCalls{0};
  bool finalized = false;
  /// Set by the first failed collective: the FIFOs are then mid-message and
  /// the communicator cannot be used again (as with NCCL's async errors).
  std::optional<Status> broken;

  /// Schedules built recently, reused while calls repeat (the common case).
  struct CachedSchedule {
    Collective collective;
    size_t count = 0;
    size_t elemBytes = 0;
    int root = -1;
    algo::Algorithm algorithm = algo::Algorithm::kRing;
    algo::Protocol protocol = algo::Protocol::kSimple;
    std::vector<size_t> blockCounts;  ///< variable-count calls only (CollCall)
    std::vector<size_t> blockOffsets;
    algo::Schedule schedule;
    exec::Program program;                              ///< the schedule, lowered
    std::shared_ptr<exec::DeviceProgram> device;        ///< GPU communicators: on the device
    std::vector<exec::ChannelConnections> connections;  ///< views into the links below
  };
  std::vector<CachedSchedule> scheduleCache;

  /// ncclRedOpCreatePreMulSum ops, by index (RedOp value - kFirstUserOp);
  /// empty slots are destroyed ops.
  std::vector<std::optional<UserOp>> userOps;

  /// Point-to-point FIFOs, made the first time a pair needs them: index by
  /// peer rank. The receiver creates its end, the sender opens it when it
  /// appears (exec::P2pLinks in comm_p2p.cc).
  std::vector<std::unique_ptr<transport::RecvEnd>> p2pRecv;
  std::vector<std::unique_ptr<transport::SendEnd>> p2pSend;
  uint64_t p2pNonce = 0;

  /// What BRAID_ALGO / BRAID_PROTO allow, and the model that chooses among it.
  /// These, deterministic, nchannels and the one-shot board are set at
  /// creation (Comm::create, connectRing) and never change after, which is
  /// what lets `choices` key an answer by the call alone.
  tune::Allowed allowed;
  tune::Model model;
  bool deterministic = false;  ///< BRAID_DETERMINISTIC
  /// choose's answers for recent calls.
  ChoiceCache choices;

  /// The schedules' connections, made the first time a schedule needs them
  /// (comm_links.cc); their names hang off linkNonce.
  std::map<LinkKey, std::unique_ptr<transport::RecvEnd>> recvLinks;
  std::map<LinkKey, std::unique_ptr<transport::SendEnd>> sendLinks;
  uint64_t linkNonce = 0;
  std::vector<std::string> madeSegments;  ///< receiving ends' names, for cleanup
  /// The one-shot all-reduce's board (null with one rank or when not allowed).
  std::unique_ptr<exec::OneShotBoard> oneShot;
  /// Scratch output for ranks whose output a schedule must not touch (a
  /// tree reduce's non-roots) and for the deterministic ring's blocks.
  std::vector<unsigned char> scratch;
  /// BRAID_TRACE's events, written when the communicator is destroyed.
  std::unique_ptr<trace::Recorder> trace;

  /// Finds the machine (topology/): loaded from BRAID_TOPO_FILE, or
  /// discovered. Before the peers are exchanged, since each rank tells the
  /// others where on it it runs (comm_topology.cc).
  Status loadTopology();
  /// The NUMA node this rank runs on, for PeerInfo (-1: unknown).
  int32_t numaIdOfThisRank() const;
  /// Places the ranks on the machine and takes the ring order from its search.
  Status planTopology();
  /// The machine; empty when discovery failed (the ring order then stays 0..N-1).
  std::optional<topology::Graph> machine;
  Status connectRing();
  /// connectRing's part for a GPU communicator (comm_connect.cc).
  Status connectGpu();
  /// Runs a batch of point-to-point transfers on the p2p FIFOs (comm_p2p.cc).
  Status runP2pTasks(const std::vector<exec::P2pTask>& tasks);
  /// Fills `out` with the connections behind every port of `program`, making
  /// the missing ones: first every receiving end, then every sending end
  /// (each waits for its receiver to have made its end), so ranks making
  /// connections at the same time cannot wait on each other in a cycle.
  Status linkSchedule(const exec::Program& program, algo::Protocol protocol,
                      std::vector<exec::ChannelConnections>* out);
  size_t llSlotBytes() const;
  /// One ring collective, as the public methods describe it.
  struct CollCall {
    Collective collective;
    const void* input;
    void* output;
    size_t count;
    DataType type;
    RedOp op;
    int root;
    /// Variable-count reduce-scatter and all-gather: nranks block counts and
    /// offsets (algo::RingParams::blockCounts); nullptr for the uniform
    /// layout. `count` is then this rank's own block.
    const size_t* blockCounts = nullptr;
    const size_t* blockOffsets = nullptr;
    void* stream = nullptr;  ///< GPU communicators: the cudaStream_t to enqueue on
  };
  /// Refuses work on a finalized, aborted, revoked or broken communicator, or one that lost a
  /// peer (its calls could only wait for the dead).
  Status checkUsable() const {
    if (std::optional<watch::Loss> loss = watch ? watch->firstLoss() : std::nullopt) {
      return lossStatus(*loss);
    }
    if (finalized) return invalidUsage("communicator was finalized");
    if (aborted.load()) return invalidUsage("communicator was aborted");
    if (revoked) {
      return invalidUsage(
          "communicator was revoked: only ncclCommDestroy, ncclCommSplit and ncclCommShrink are "
          "left");
    }
    if (broken) return broken->withContext("communicator unusable after an earlier error");
    if (gpu) BRAID_TRY(gpuFault().withContext("communicator unusable after a kernel gave up"));
    return Status::success();
  }
  Status runCollective(const CollCall& call);
  /// With BRAID_TRACE: one event on the collectives track saying what `call` ran (on a GPU
  /// communicator the event spans the enqueue, not the kernel).
  void traceCall(const CollCall& call, const tune::Choice& choice, int nchannels, double startUs);
  /// runCollective's work once the call is checked and recorded.
  Status runCollectiveRecorded(const CollCall& call);
  /// BRAID_CHECK_CALLS: whether every rank makes this same call (comm_check_calls.cc).
  Status checkCallAgrees(const CollCall& call);
  uint64_t checkedCalls = 0;  ///< the sequence number of the next checked call
  uint64_t shrinks = 0;       ///< shrink() calls so far: the key of the next one's letter
  /// The algorithm and protocol of `call` (tune/select.h, or the ring for
  /// what only the ring runs), from `choices` when a recent call asked the same.
  Result<tune::Choice> choose(const CollCall& call);
  Result<const CachedSchedule*> scheduleFor(const CollCall& call, const tune::Choice& choice);
  /// All-reduce in deterministic mode on the ring (comm_deterministic.cc).
  Status deterministicRingAllReduce(const CollCall& call, const kernels::HostOp& op,
                                    algo::Protocol protocol);
  Result<kernels::HostOp> hostOpFor(DataType type, RedOp op);
  /// The operator of a call as the kernels take it (built-in, or a live
  /// premulsum op of this communicator made for `type`).
  Result<OpSpec> opSpecFor(DataType type, RedOp op);
  transport::WaitContext waitContext() const;

  /// ncclCommRegister's registrations: start -> bytes.
  std::map<void*, size_t> registrations;

  // GPU communicators (comm_gpu*.cc). `gpu` is null on host communicators.
  int cudaDevice = -1;
  std::unique_ptr<GpuState> gpu;
  /// Makes the GPU state of a communicator on `device` (after the peers are known).
  Status createGpu(int device);
  /// Enqueues a collective on the call's stream.
  Status runCollectiveOnGpu(const CollCall& call);
  /// Enqueues a batch of sends and receives on `stream`.
  Status sendRecvOnGpu(const std::vector<P2pOp>& ops, void* stream);
  /// The GPU FIFOs behind every port of `program`, made where missing:
  /// receiving ends first, then sending ends (as linkSchedule).
  Result<std::vector<exec::ChannelPorts>> linkGpuSchedule(const exec::Program& program,
                                                          algo::Protocol protocol);
  /// The GPU FIFOs of point-to-point transfers with these peers.
  Status linkGpuP2p(const std::vector<int>& recvFrom, const std::vector<int>& sendTo);
  /// Where memory that rank `peer` writes or reads lies: this GPU's memory
  /// when the peer's GPU reaches it and BRAID_TRANSPORTS allows cuda_ipc,
  /// else pinned host memory (FIFOs, one-shot boards).
  transport::cuda_ipc::FifoPlacement placementFor(int peer) const;
  /// Adds calls to the pending launch, all to the same one: `lanes[i]` is
  /// (-1, 0) for a collective, else (peer, 0 recv / 1 send / 2 self copy).
  /// Launches at once unless fusing; launches what is pending first when the
  /// calls cannot join it.
  Status enqueueGpu(const std::vector<kernels::engine::EngineCall>& calls,
                    const std::vector<std::pair<int, int>>& lanes, void* stream);
  /// Launches the pending calls, if any.
  Status flushGpu();
  /// What a kernel of this communicator recorded when it gave up; success if nothing.
  Status gpuFault() const;
  /// Waits for every launch of this communicator to finish.
  Status waitForGpu();

  // The flight recorder (comm_flight.cc).
  std::unique_ptr<flight::FlightRecorder> flight;
  uint64_t flightSeq = 0;  ///< the record of the call now running on this communicator
  /// A GPU fault was dumped already (asyncError dumps the first it sees).
  mutable std::atomic<bool> faultDumped{false};
  Status startFlightRecorder();
  /// "AllReduce of 1024 x float sum", "Broadcast of 16 x int8, root 2".
  std::string describeCall(const CollCall& call) const;
  /// What runs the call now recorded: its choice and, for schedules, its channels' programs.
  void planFlight(const tune::Choice& choice, const exec::Program* program);
  /// A call (`what`) failed: its story to the log on a timeout, and to the dump directory.
  void noteFailure(const Status& s, const std::string& what) const;
  /// Every loss, worded as lossStatus does.
  std::vector<std::string> lossWords() const;

  // Peers lost (comm_peer_loss.cc).
  /// Starts the watcher, after the bootstrap and before anything that waits for peers.
  Status startWatch();
  /// What a lost peer does to this communicator: every wait ends (on the watcher's thread).
  void onPeerLost(const watch::Loss& loss);
  /// ncclRemoteError naming the lost rank, its process and how it was found.
  Status lossStatus(const watch::Loss& loss) const;
  /// The error a failed call returns: when a lost peer is behind it, the loss first, then what
  /// the call saw (waiting a moment for the word of a loss when the call saw a remote error).
  Status explainFailure(const Status& s) const;
  /// Stops what runs (calls in other threads, kernels) and waits until it has (revoke, shrink
  /// with NCCL_SHRINK_ABORT): until `ownCalls` calls are left, the caller's own. The stop flag
  /// stays raised when `keepStopped` or a peer is lost.
  Status quiesce(bool keepStopped, int ownCalls);

  /// The watcher of the ring of ranks (watch/peer_watch.h); null with one rank. Declared last:
  /// its thread calls onPeerLost, so it goes first.
  std::unique_ptr<watch::PeerWatch> watch;
};

}  // namespace braid
