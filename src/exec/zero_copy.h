// The zero-copy all_reduce for large messages on one host: every rank reads
// its peers' inputs in place and writes its result into their outputs.
//
// The FIFO ring copies each byte through a shared slot: the sender writes it
// there, the receiver reads it back, and every element crosses the memory
// bus several times more than the reduction needs. Here rank r owns block r
// of the message (the same blocks as the deterministic ring: ceil(count / N)
// elements each, the last ones shorter or empty) and, a chunk at a time,
//
//   1. reads block r of every peer's input: in place where the peer's buffer is mapped here
//      (ranks that are threads of one process; buffers from ncclMemAlloc, which are shared
//      memory: transport/shm/shared_host_memory.h), otherwise into a scratch chunk that stays
//      in its cache, with process_vm_readv (exec/peer_memory.h),
//   2. folds the N operands in the in-order tree's order (algo::foldInOrder)
//      straight into block r of its own output, applying avg's division,
//   3. writes that chunk, still in its cache, into block r of every peer's
//      output (a plain copy where mapped, process_vm_writev otherwise).
//
// Cross-memory copies pay off only where the kernel copies about as fast as a vector loop:
// on AMD Zen its `rep movsb` runs at a third of that, and the FIFOs win. So each rank measures
// the two at creation, and unless every rank found the kernel's fast enough (or
// BRAID_ZERO_COPY=2), a call whose buffers are not all mapped is declined by every rank alike
// (they all see what every rank posted) and runs on the FIFOs.
//
// Each rank reads S/N bytes of every input and writes S/N bytes of every
// output, so the memory moves 2 N S bytes in all: the least an all_reduce
// can (docs/benchmarks.md, "The memory limit").
//
// A call is two meetings on a board in shared memory (one page per rank):
// each rank publishes its buffers' addresses and the call's number, reads
// its peers', works, then says it is done and waits until every peer is:
// a rank must not return while a peer may still read its input or write its
// output. Waits spin, yield and sleep as the one-shot board's do
// (exec/peer_wait.h) and end at the deadline or the abort flag.
//
// Which calls may run here (Calls decides; zeroCopyKeepsResult) is a question
// of bits: the result must be the one the FIFO path gives. In deterministic
// mode both fold every element in the in-order tree's order, so any call
// qualifies. Otherwise the ring's order depends on the block an element
// falls in, and the result is the same only where order cannot matter:
// integers (their sum, product, min and max do not depend on it), and two
// ranks' float sum, product or avg (a + b and b + a are the same number).
// premulsum's scalar is the sender's, so it keeps the FIFOs.
//
// Whether the kernel lets ranks reach each other's memory is probed when the
// board is made, by every rank for every peer; the answer is the same on
// every rank (all must reach all) and, when it is no, said once at INFO.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "braid/status.h"
#include "braid/types.h"
#include "exec/in_order_fold.h"
#include "exec/peer_memory.h"
#include "kernels/host_reduce.h"
#include "transport/connection.h"

namespace braid::exec {

/// "/braid-<16 hex digits of nonce>-zerocopy-<rank>".
std::string zeroCopySegmentName(uint64_t nonce, int rank);

/// Whether a zero-copy all_reduce of `nranks` ranks gives the same bits as
/// the FIFO path for this type and operator (see the top of this file).
bool zeroCopyKeepsResult(DataType type, RedOp op, const kernels::HostOp& hostOp, int nranks,
                         bool deterministic);

/// How a call reaches its peers' buffers.
enum class ZeroCopyMode {
  kDeclined,     ///< neither way is open or worth it: the caller runs the FIFO path instead
  kMapped,       ///< every buffer is mapped here (threads of one process, or ncclMemAlloc memory)
  kCrossMemory,  ///< process_vm_readv / process_vm_writev
};

/// Whether cross-memory copies are used for buffers that cannot be mapped.
enum class CrossMemoryPolicy {
  kWhereFaster,  ///< where the kernel's copy measured at creation keeps up with a plain copy
  kAlways,       ///< always (BRAID_ZERO_COPY=2; tests)
  kNever,        ///< mapped buffers only (tests of the declined path)
};

class ZeroCopyBoard {
 public:
  struct Options {
    CrossMemoryPolicy crossMemory = CrossMemoryPolicy::kWhereFaster;
    /// Reads a word of a peer process (probePeerWord; tests pass one that refuses).
    Result<uint64_t> (*probe)(pid_t pid, const void* remote) = probePeerWord;
    /// A multiple of 64 to replace the chunk sized for the cache (tests cross chunk edges
    /// with small messages); 0 = sized for the cache.
    size_t chunkBytes = 0;
  };

  /// Every rank calls create with the same nonce, nranks and options; `barrier` is the
  /// bootstrap barrier. The board is made whether or not ranks may reach each other;
  /// usable() says which, the same on every rank.
  static Result<std::unique_ptr<ZeroCopyBoard>> create(uint64_t nonce, int rank, int nranks,
                                                       const std::function<Status()>& barrier,
                                                       const Options& options);
  static Result<std::unique_ptr<ZeroCopyBoard>> create(uint64_t nonce, int rank, int nranks,
                                                       const std::function<Status()>& barrier) {
    return create(nonce, rank, nranks, barrier, Options());
  }

  ZeroCopyBoard(const ZeroCopyBoard&) = delete;
  ZeroCopyBoard& operator=(const ZeroCopyBoard&) = delete;
  ~ZeroCopyBoard();

  /// Every rank can read and write every peer's memory.
  bool usable() const { return usable_; }
  /// Why not, when !usable() (the first refusal this rank saw, or a peer's word).
  const std::string& unusableReason() const { return unusableReason_; }
  /// Whether unmappable buffers go by cross-memory copies (the policy, and on every rank the
  /// measurement at creation where the policy asks for one).
  bool crossMemory() const { return crossMemory_; }
  /// The measurement: the kernel's cross-memory copy rate over a plain copy's, on this rank
  /// (0 where the policy needs none).
  double crossMemoryRatio() const { return crossMemoryRatio_; }
  /// Whether peers are threads of this process (copies without syscalls).
  bool peersInProcess() const;
  /// Calls that ran here (declined ones do not count).
  uint64_t calls() const { return ran_; }
  /// Bytes of a block reduced at once.
  size_t chunkBytes() const { return chunkBytes_; }

  /// output = the fold over all ranks of input, `count` elements of type `type`, with `op`
  /// (whose load must be null: no premulsum) including its finish (avg's division). `output`
  /// may equal `input`. Every rank makes the same call, and every rank comes to the same
  /// `mode`: kDeclined leaves both buffers untouched for the FIFO path. Fails with
  /// kRemoteError naming the peer on a deadline, the abort flag, or a copy or mapping the
  /// kernel refused; the board is unusable afterwards.
  Status allReduce(const void* input, void* output, size_t count, DataType type,
                   const kernels::HostOp& op, const transport::WaitContext& wait,
                   ZeroCopyMode* mode);
  /// The same for reduce_scatter: `input` holds nranks blocks of `count` elements, and rank
  /// r's output is the fold of every rank's block r (read in place, nothing written to peers).
  Status reduceScatter(const void* input, void* output, size_t count, DataType type,
                       const kernels::HostOp& op, const transport::WaitContext& wait,
                       ZeroCopyMode* mode);
  /// The same for all_gather: this rank's `count` elements go into block `rank` of every
  /// rank's output (written into peers' outputs in place).
  Status allGather(const void* input, void* output, size_t count, DataType type,
                   const transport::WaitContext& wait, ZeroCopyMode* mode);

 private:
  struct Rank;
  struct Buffers;
  class Mappings;

  ZeroCopyBoard(int rank, int nranks, size_t chunkBytes);
  Status meet(uint64_t call, bool done, const transport::WaitContext& wait);
  Result<ZeroCopyMode> resolve(Buffers& buffers, size_t inputBytes, size_t outputBytes);
  /// A call: the checks, meeting 1, `work` with the buffers as every rank resolved them
  /// (unless declined), meeting 2; the board is broken after a failure.
  Status runCall(const char* what, const void* input, void* output, size_t count, size_t inputBytes,
                 size_t outputBytes, const transport::WaitContext& wait, ZeroCopyMode* mode,
                 const std::function<Status(const Buffers&, ZeroCopyMode)>& work);
  /// Folds `count` elements at byte `inAt` of every input into byte `outAt` of this rank's
  /// output and, `toPeers`, of every peer's.
  Status reduceBlock(const Buffers& buffers, ZeroCopyMode mode, size_t inAt, size_t outAt,
                     size_t count, size_t elemBytes, const kernels::HostOp& op, bool toPeers);
  /// reduceBlock of mapped buffers into large outputs, with non-temporal stores.
  void streamReducedBlock(const Buffers& buffers, size_t inAt, size_t outAt, size_t count,
                          size_t elemBytes, const kernels::HostOp& op, bool toPeers);
  /// All-gather's copy of this rank's `bytes` into block `rank` of every output.
  Status copyBlock(const Buffers& buffers, ZeroCopyMode mode, size_t bytes);

  int rank_;
  int nranks_;
  bool usable_ = false;
  bool crossMemory_ = false;
  double crossMemoryRatio_ = 0;
  std::string unusableReason_;
  uint64_t calls_ = 0;  ///< meetings held: calls run and declined
  uint64_t ran_ = 0;
  Status broken_;
  std::vector<Rank> ranks_;
  std::vector<PeerAddressSpace> spaces_;
  std::unique_ptr<Mappings> mappings_;
  size_t chunkBytes_;
  InOrderFold fold_;
  std::vector<uint64_t> staged_;  ///< one streamed piece's result, for the non-temporal copies out
};

}  // namespace braid::exec
