// braid/comm.h: the C++ API of a communicator.
//
// A Comm is one rank's handle on a group of ranks that run collectives
// together. The NCCL C API (nccl.h) is a thin shim over this class.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "braid/status.h"
#include "braid/types.h"

struct ncclWindow_vidmem;  // include/nccl_device/window_layout.h: what an ncclWindow_t points to

namespace braid {

namespace profiler {
class CommProfiler;  // src/profiler/comm_profiler.h
}  // namespace profiler

/// A buffer that lies in a registered window: the window's state as the host reads it, the
/// window as ncclCommWindowRegister gave it (what a kernel dereferences: device memory on a GPU),
/// and the buffer's offset in it.
struct WindowedBuffer {
  const ncclWindow_vidmem* window = nullptr;
  const ncclWindow_vidmem* device = nullptr;
  size_t offset = 0;
};
/// The window of this communicator's that `bytes` at `buffer` lie in, if one does.
using WindowLookup = std::function<std::optional<WindowedBuffer>(const void* buffer, size_t bytes)>;

/// 128 opaque bytes naming a communicator being created; the same size and
/// layout as ncclUniqueId. Made by Comm::newUniqueId on one rank and passed to
/// all the others (by MPI, a file, the launcher).
struct UniqueId {
  char bytes[128];
};

/// Options of a communicator beyond what the environment sets.
struct CommOptions {
  /// Run on host memory even when a GPU is present (BRAID_HOST_COMM=1 asks
  /// the same of every communicator).
  bool hostMemory = false;
  /// The CUDA device to run on; -1: the calling thread's current device,
  /// as NCCL takes it. Without a usable device the communicator runs on
  /// host memory.
  int device = -1;
  /// Raised by another thread to abandon the creation (ncclCommAbort on a communicator whose
  /// non-blocking creation still runs): every wait of it ends within milliseconds and create()
  /// fails. It stays the communicator's stop flag afterwards. Null: the communicator makes its own.
  std::shared_ptr<std::atomic<bool>> stop;
  /// Bounds on a GPU communicator's channels (ncclConfig_t's minCTAs and maxCTAs), over the
  /// environment's NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS; 0 leaves them to it.
  int minChannels = 0;
  int maxChannels = 0;
  /// The communicator's name (ncclConfig_t's commName): said at INFO when it is made and in its
  /// flight recorder's dumps; empty: none.
  std::string name;
  /// More ids after the one create() is given (ncclCommInitRankScalable's nId > 1), the same in
  /// the same order on every rank: their roots share the rendezvous, each meeting one block of
  /// the ranks. Empty: the one id.
  std::vector<UniqueId> moreIds;
};

/// One send or receive of a point-to-point batch (Comm::sendRecv).
struct P2pOp {
  enum class Kind { kSend, kRecv };
  Kind kind = Kind::kSend;
  int peer = -1;           ///< the other rank (may be this rank itself)
  void* buffer = nullptr;  ///< read by a send, written by a receive
  size_t count = 0;        ///< elements of `type`; 0 is a no-op
  DataType type = DataType::kInt8;
  /// The profiler plugin's point-to-point API event for it (v5 on); null: none.
  void* profilerApiEvent = nullptr;
};

/// How one collective call may run, beyond what its communicator decides (ncclCollConfig_t).
/// Every field's zero leaves the communicator's choice; every rank must pass the same.
struct CallTuning {
  /// Bounds on the channels the call's schedule spreads over, within the communicator's.
  int minChannels = 0;
  int maxChannels = 0;
  /// Use as few channels as the bounds allow (NCCL_CTA_POLICY_EFFICIENCY or _ZERO).
  bool fewestChannels = false;
  /// The (algorithm, protocol) pairs the call may use, bit algorithm * 2 + protocol of the
  /// algorithms ring, tree, one-shot and the protocols simple, LL; 0: every pair the
  /// communicator allows.
  uint32_t pairs = 0;
  /// With `pairs`: a collective none of the pairs can run is an error (else the communicator
  /// chooses as if no pairs were given).
  bool forcePairs = true;
  bool any() const { return minChannels != 0 || maxChannels != 0 || fewestChannels || pairs != 0; }
};

/// One collective call with its arguments named: what allReduce ... reduce, allGatherV and
/// reduceScatterV take, and what Comm::runCollective runs.
struct CollectiveCall {
  Collective collective = Collective::kAllReduce;
  const void* input = nullptr;
  void* output = nullptr;
  /// Elements, as the call's own count argument says them: per rank for all_reduce, broadcast
  /// and reduce, recvCount of reduceScatter, sendCount of allGather; the variable-count forms:
  /// this rank's block.
  size_t count = 0;
  DataType type = DataType::kFloat32;
  RedOp op = RedOp::kSum;  ///< the collectives that reduce
  int root = -1;           ///< broadcast and reduce
  /// The variable-count forms: size() block counts and displacements (in elements), read until
  /// the call ran; nullptr for the uniform layout.
  const size_t* blockCounts = nullptr;
  const size_t* blockOffsets = nullptr;
  void* stream = nullptr;  ///< GPU communicators: the cudaStream_t to enqueue on
  /// allGatherV or reduceScatterV: blockCounts and blockOffsets must be given.
  bool variableCounts = false;
  /// Per-call options (the nccl*Config collectives); the default leaves it all to the comm.
  CallTuning tuning;
  /// The profiler plugin's event for the call as the application made it (NCCL's collective
  /// API event, v5 on): the parent of the call's own event. Null: none.
  void* profilerApiEvent = nullptr;
};

/// A collective call whose arguments a communicator checked (Comm::checkCollective), so that it
/// runs without being checked again: a call queued in a group is checked when it is issued.
class CheckedCollective {
 public:
  const CollectiveCall& call() const { return call_; }

 private:
  friend class Comm;
  explicit CheckedCollective(const CollectiveCall& call) : call_(call) {}
  CollectiveCall call_;
};

/// A batch of sends and receives whose arguments a communicator checked (Comm::checkSendRecv,
/// checkGather, ...): it runs without being checked again. Batches checked one by one stay
/// checked when appended (a group's consecutive ncclSend and ncclRecv run as one batch).
class CheckedBatch {
 public:
  const std::vector<P2pOp>& ops() const { return ops_; }
  void append(const CheckedBatch& more) {
    ops_.insert(ops_.end(), more.ops_.begin(), more.ops_.end());
  }

 private:
  friend class Comm;
  explicit CheckedBatch(std::vector<P2pOp> ops) : ops_(std::move(ops)) {}
  std::vector<P2pOp> ops_;
};

/// A symmetric memory window as its pointer queries see it (Comm::lookupWindow).
struct WindowInfo {
  int worldRank = -1;           ///< the registering rank
  int worldSize = 0;            ///< ranks of its communicator
  int lsaFirstWorldRank = 0;    ///< the world rank of the load/store team's rank 0
  size_t bytes = 0;             ///< this rank's buffer
  std::vector<void*> lsaBases;  ///< where each team rank's buffer is mapped in this process
};

/// Where a communicator's calls run. On a host communicator every call
/// completes before it returns and `stream` is ignored. On a GPU
/// communicator (made while a CUDA device is current) buffers are device
/// memory and a call returns once its work is enqueued on `stream` (a
/// cudaStream_t; nullptr is the default stream), ordered with the caller's
/// other work there, as NCCL's are; errors found later are asyncError()'s.
class Comm {
 public:
  /// Makes a new id; unless BRAID_COMM_ID names an address, starts the
  /// rendezvous listener in this process (it ends once all ranks joined).
  static Result<UniqueId> newUniqueId();

  /// The calling thread's current CUDA device (or emulated one), -1 when
  /// there is none: what a communicator made now would run on.
  static int currentDevice();

  /// Joins communicator `id` as `rank` of `nranks`; blocks until all ranks
  /// have joined and connected (or BRAID_TIMEOUT_MS passed).
  static Result<std::unique_ptr<Comm>> create(const UniqueId& id, int nranks, int rank,
                                              const CommOptions& options = {});

  /// The color of a rank that takes part in split() without joining a new communicator.
  static constexpr int kSplitNoColor = -1;

  /// Collective over this communicator: the ranks that pass one `color`
  /// form a new communicator, ranked by `key` (ties by their rank here),
  /// on the same device (or host memory) as this one; kSplitNoColor takes
  /// part without joining one and gets null. The new communicator takes the channel bounds and
  /// name of `child` (ncclCommSplit's config); where it runs is this one's.
  Result<std::unique_ptr<Comm>> split(int color, int key, const CommOptions& child = {});

  /// Collective over this communicator: it and the ranks that join with `id` form a new
  /// communicator of `newSize` ranks, in which this communicator's ranks keep theirs. Exactly
  /// one rank passes the id (made by newUniqueId() in its process, ncclCommGetUniqueId); the
  /// others pass null and learn it from that rank. The new ranks join with
  /// create(id, newSize, rank) (ncclCommGrow). `child` as for split().
  Result<std::unique_ptr<Comm>> grow(int newSize, const UniqueId* id,
                                     const CommOptions& child = {});

  /// Where the communicator finds the windows that the buffers of its collectives lie in: a
  /// GPU communicator runs all_reduce, all_gather and reduce_scatter whose buffers lie in
  /// symmetric windows (NCCL_WIN_COLL_SYMMETRIC) with the symmetric kernels, which load and
  /// store the peers' windows (kernels/engine/symmetric.h). The window registry gives it; a
  /// program may give its own (the tests do, with windows laid out by hand). Set it on every
  /// rank alike, between calls.
  void setWindowLookup(WindowLookup lookup);

  /// Collective (ncclCommSuspend with NCCL_SUSPEND_MEM): waits for this communicator's kernels,
  /// then gives back its device memory (FIFOs, device programs, scratch, one-shot boards); a
  /// host communicator holds none. Calls may follow: they make their FIFOs again.
  Status suspendMemory();
  /// Collective (ncclCommResume): makes again what a call needs before its first use (the
  /// one-shot boards).
  Status resumeMemory();
  /// Device memory this communicator holds now (none on host memory).
  struct DeviceMemory {
    uint64_t held = 0;  ///< bytes in all
    uint64_t kept = 0;  ///< of them, what suspendMemory() keeps
  };
  DeviceMemory deviceMemory() const;

  /// Device memory every rank of this host maps: this rank's share (zeroed) and, in device
  /// memory, where each share of the host's ranks is mapped here (a device communicator's
  /// barrier cells, ncclDevCommCreate).
  struct HostSharedMemory {
    void* handle = nullptr;              ///< names it for unshareAcrossHost
    void* local = nullptr;               ///< this rank's share
    void* const* deviceTable = nullptr;  ///< `ranks` device pointers, by rank of the host
    int ranks = 0;                       ///< the host's ranks (hostBlock().second)
  };
  /// Collective: `bytes` of zeroed device memory on every rank, mapped by every rank of the
  /// host. GPU communicators whose ranks share one host and reach each other's memory only.
  Result<HostSharedMemory> shareAcrossHost(size_t bytes);
  /// Whether shareAcrossHost can succeed here: a GPU communicator on one host whose GPUs reach
  /// each other's memory. `why` receives the reason when not.
  bool canShareAcrossHost(std::string* why = nullptr) const;
  /// Frees what shareAcrossHost gave as `handle` here (not collective; no kernel may use it).
  Status unshareAcrossHost(void* handle);

  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  /// This rank, 0 <= rank() < size().
  int rank() const;
  /// Number of ranks.
  int size() const;
  /// The CUDA device of this rank, -1 for a host communicator.
  int cudaDevice() const;
  /// The ranks next to this one, in rank order, that share its host: the
  /// first of them and how many (NCCL's load/store-accessible team).
  std::pair<int, int> hostBlock() const;

  /// What the cost model predicts one call of `collective` on `count`
  /// elements (per rank, as the call's own count argument) would take, in
  /// microseconds, with the algorithm and protocol braid would choose
  /// (ncclGroupSimulateEnd).
  Result<double> estimateUs(Collective collective, size_t count, DataType type) const;
  /// The same for the variable-count all-gather or reduce-scatter whose
  /// size() blocks hold counts[r] elements (allGatherV, reduceScatterV).
  Result<double> estimateVUs(Collective collective, const size_t* counts, DataType type) const;
  /// The same for a batch of sends and receives (sendRecv); gather, scatter
  /// and the all-to-alls are such batches (src/comm/p2p_batches.h). Only peers,
  /// counts and types are read, never the buffers.
  Result<double> estimateP2pUs(const std::vector<P2pOp>& ops) const;

  /// Checks a collective's arguments without running it: its datatype, root, buffers (NULL
  /// only where this rank reads or writes nothing) and, for the variable-count forms, the
  /// blocks' layout (this rank's count, addressable extents, overlaps the schedule cannot honour).
  Result<CheckedCollective> checkCollective(const CollectiveCall& call) const;
  /// Runs a checked collective; every collective below is this.
  Status runCollective(const CheckedCollective& call);
  /// Checks and runs a collective.
  Status runCollective(const CollectiveCall& call);
  /// output[i] = op over all ranks of input[i], for i < count, on every rank.
  /// input == output is the in-place form. Completes before it returns.
  /// `op` is a built-in RedOp or one made by createPreMulSum.
  Status allReduce(const void* input, void* output, size_t count, DataType type, RedOp op,
                   void* stream = nullptr);
  /// input holds size() blocks of recvCount; rank r's output = op over all
  /// ranks of their block r. In place: output == input + rank() * recvCount.
  Status reduceScatter(const void* input, void* output, size_t recvCount, DataType type, RedOp op,
                       void* stream = nullptr);
  /// output block r (sendCount elements) = rank r's input, on every rank.
  /// In place: input == output + rank() * sendCount.
  Status allGather(const void* input, void* output, size_t sendCount, DataType type,
                   void* stream = nullptr);
  /// The variable-count all-gather (braidAllGatherV): output block r holds
  /// recvCounts[r] elements at output + displs[r] (in elements) and receives
  /// rank r's input. sendCount must equal recvCounts[rank()], and every rank
  /// must pass the same recvCounts and displs (of size() entries each). Output
  /// blocks must not overlap. In place: input == output + displs[rank()].
  Status allGatherV(const void* input, size_t sendCount, void* output, const size_t* recvCounts,
                    const size_t* displs, DataType type, void* stream = nullptr);
  /// The variable-count reduce-scatter (braidReduceScatterV): input block r
  /// holds sendCounts[r] elements at input + displs[r]; rank r's output
  /// (recvCount elements) = op over all ranks of their block r. recvCount
  /// must equal sendCounts[rank()], and every rank must pass the same
  /// sendCounts and displs. In place: output == input + displs[rank()], and
  /// no other block may overlap that one.
  Status reduceScatterV(const void* input, const size_t* sendCounts, const size_t* displs,
                        void* output, size_t recvCount, DataType type, RedOp op,
                        void* stream = nullptr);
  /// Every rank's output = the root's input (only the root reads an input).
  Status broadcast(const void* input, void* output, size_t count, DataType type, int root,
                   void* stream = nullptr);
  /// The root's output = op over all ranks of input (only the root writes).
  Status reduce(const void* input, void* output, size_t count, DataType type, RedOp op, int root,
                void* stream = nullptr);

  /// Makes a premulsum operator: each rank's input is multiplied by *scalar
  /// (of `type`) before the sum. With scalarByPointer the scalar is read from
  /// `scalar` at every call that uses the operator; otherwise copied now.
  /// The returned value is used as a RedOp with this communicator only.
  Result<RedOp> createPreMulSum(const void* scalar, DataType type, bool scalarByPointer);
  /// Frees an operator from createPreMulSum.
  Status destroyOp(RedOp op);

  /// Runs a batch of sends and receives with any peers, all at once, so the
  /// order of the calls within the batch cannot deadlock (a ring exchange
  /// where every rank sends first works). Messages between two ranks match
  /// in the order they were issued; sizes must agree. Completes before it
  /// returns. This is what a group of ncclSend / ncclRecv runs.
  Status sendRecv(const std::vector<P2pOp>& ops, void* stream = nullptr);
  /// Checks a batch without running it: every peer a rank, every type known, a buffer wherever
  /// a count is not 0.
  Result<CheckedBatch> checkSendRecv(std::vector<P2pOp> ops) const;
  /// Runs a checked batch; sendRecv, gather, scatter and the all-to-alls are this.
  Status sendRecv(const CheckedBatch& batch, void* stream = nullptr);

  /// The root receives `count` elements from every rank r into
  /// output + r * count (its own input included); other ranks' output is unused.
  Status gather(const void* input, void* output, size_t count, DataType type, int root,
                void* stream = nullptr);
  /// Every rank r receives block r (count elements) of the root's input.
  Status scatter(const void* input, void* output, size_t count, DataType type, int root,
                 void* stream = nullptr);
  /// Block j of every rank's input goes to rank j, which stores the block
  /// from rank i at output + i * count.
  Status allToAll(const void* input, void* output, size_t count, DataType type,
                  void* stream = nullptr);

  /// The variable-count all-to-all (braidAlltoAllV): sendCounts[j] elements
  /// at input + sendDispls[j] go to rank j, which stores them at its
  /// output + recvDispls[i] for this rank i; recvCounts[i] must equal what
  /// rank i sends here. Input and output must not overlap.
  Status allToAllV(const void* input, const size_t* sendCounts, const size_t* sendDispls,
                   void* output, const size_t* recvCounts, const size_t* recvDispls, DataType type,
                   void* stream = nullptr);
  /// The checked batches the four calls above run (sendRecv(CheckedBatch)), for a caller that
  /// checks a call now and runs it later (a group).
  Result<CheckedBatch> checkGather(const void* input, void* output, size_t count, DataType type,
                                   int root) const;
  Result<CheckedBatch> checkScatter(const void* input, void* output, size_t count, DataType type,
                                    int root) const;
  Result<CheckedBatch> checkAllToAll(const void* input, void* output, size_t count,
                                     DataType type) const;
  Result<CheckedBatch> checkAllToAllV(const void* input, const size_t* sendCounts,
                                      const size_t* sendDispls, void* output,
                                      const size_t* recvCounts, const size_t* recvDispls,
                                      DataType type) const;

  /// The error that made this communicator unusable, or success. On a GPU
  /// communicator this includes what a kernel found (a peer that never
  /// came, an abort), read without waiting for the kernel.
  Status asyncError() const;

  /// Whether the communicator runs on a GPU (device memory, streams).
  bool onGpu() const;
  /// The communicator's profiler plugin (NCCL_PROFILER_PLUGIN); null where none is loaded.
  /// The API layer starts NCCL's API events with it as the application calls.
  profiler::CommProfiler* profilerPlugin() const;

  /// Within a group (ncclGroupStart/End): collectives and point-to-point
  /// batches issued between beginFusedLaunch and endFusedLaunch on a GPU
  /// communicator go into as few kernel launches as their streams and
  /// datatypes allow (usually one), made by endFusedLaunch. No-ops on a
  /// host communicator.
  void beginFusedLaunch();
  Status endFusedLaunch();

  /// Tracks `bytes` at `buffer` as registered (ncclCommRegister); the handle
  /// names the registration for deregisterBuffer.
  Result<void*> registerBuffer(void* buffer, size_t bytes);
  Status deregisterBuffer(void* handle);

  /// Registers `bytes` at `buffer` as a symmetric memory window with `flags`
  /// (ncclCommWindowRegister; collective): the window's handle (an ncclWindow_t), or null where
  /// this communicator makes no windows (a host communicator, one spanning hosts, GPUs that do
  /// not all reach each other), as NCCL's without symmetric support. docs/symmetric-memory.md.
  Result<void*> registerWindow(void* buffer, size_t bytes, int flags);
  /// Releases a window this communicator registered; fails for any other handle.
  Status deregisterWindow(void* window);
  /// This rank's buffer of a window this communicator registered; null where it makes none.
  Result<void*> windowUserPointer(void* window) const;
  /// Whether this communicator makes no windows (registerWindow answers null).
  bool declinesWindows() const;
  /// The live window `window` of any communicator of this process (the pointer queries get only
  /// the handle); fails for one that is not.
  static Result<WindowInfo> lookupWindow(const void* window);

  /// Waits for every rank to reach finalize; afterwards only destruction is allowed.
  Status finalize();
  /// Stops every operation in flight (calls blocked in other threads, kernels) and returns once
  /// they have; afterwards only destruction, split() and shrink() are allowed (ncclCommRevoke).
  Status revoke();
  /// A new communicator of this one's ranks but those in `exclude`, which must not call it;
  /// every other rank must, with the same list. Ranks keep their order and are numbered anew.
  /// Works when excluded ranks are dead: the survivors meet through their watchers, not the
  /// bootstrap ring. `abortFirst` (NCCL_SHRINK_ABORT) first stops what still runs here. `child`
  /// as for split().
  Result<std::unique_ptr<Comm>> shrink(const std::vector<int>& exclude, bool abortFirst,
                                       const CommOptions& child = {});
  /// Makes blocked and later operations of this rank fail at once, and
  /// returns once no call is running on this communicator (so it can be
  /// destroyed, as ncclCommAbort does, even from another thread).
  void abort();

  class Impl;

 private:
  explicit Comm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace braid
