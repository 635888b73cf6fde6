// The one-shot all_reduce for tiny messages on one host.
//
// Every rank publishes its whole input on a board in shared memory that all
// ranks map, and every rank then reads all the others' inputs and reduces
// them itself. One step instead of a ring's 2(N-1) or a tree's 2 log N, at
// the price of every rank reading N-1 inputs: it wins only while messages
// are small (a few KiB).
//
// Terms used here and in one_shot.cc:
//
//   call    the k-th allReduce on this board, counted from 0 by every rank
//           alike (all ranks make the same calls in the same order)
//   slot    where a rank publishes call k: one of two per rank, k % 2
//           (its parity), so that a rank may publish call k+1 while slow
//           peers still read call k
//   chunk   the piece of a message reduced at once (kChunkBytes), so the
//           partial results stay in small scratch buffers in L1
//
// Every rank reduces every element in the same order, the in-order binary
// tree's (algo::foldInOrder), so all ranks get the same bits, and the same
// bits as the tree algorithm in deterministic mode.
//
// The two protocols publish differently:
//
//   simple  the rank writes pre(input) into its slot, then stores the call
//           number + 1 in `published` with release semantics; readers wait
//           for it once per call, then read the slot in place.
//   ll      the slot is 8-byte lines {4 bytes of pre(input), 4-byte flag},
//           each written with one 64-bit store; the flag, derived from the
//           call number and never 0, says the line holds this call's data,
//           so readers poll the lines themselves and need no counter.
//
// The ranks' premulsum scalars may differ (NCCL allows it): each rank
// publishes pre(its input), loaded with its own scalar. avg's division is
// the caller's job, as for the other executors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "algo/algorithm.h"
#include "braid/status.h"
#include "exec/in_order_fold.h"
#include "kernels/engine/launch.h"
#include "kernels/host_reduce.h"
#include "transport/connection.h"

namespace braid::exec {

/// "/braid-<16 hex digits of nonce>-oneshot-<rank>", the segment rank
/// publishes in.
std::string oneShotSegmentName(uint64_t nonce, int rank);

/// One rank's view of the shared board: its own segment and its peers'.
/// Not thread-safe: one thread makes a rank's calls.
class OneShotBoard {
 public:
  /// The largest message a board is made for unless the caller says otherwise.
  static constexpr size_t kDefaultMaxBytes = 64 * 1024;
  /// How many bytes of a message are reduced at once.
  static constexpr size_t kChunkBytes = 2048;
  /// The number of distinct LL flags; tests pass a smaller one (at least 2)
  /// to reach the point where flags repeat (see one_shot.cc) in a few calls.
  static constexpr uint32_t kLlFlagPeriod = 0xffffffffu;

  /// Every rank calls create with the same nonce, nranks, maxBytes and
  /// llFlagPeriod; `barrier` is the bootstrap barrier. Each rank creates its
  /// own segment, all meet at the barrier, each maps its peers' segments,
  /// all meet again, and each unlinks its own name, so nothing is left in
  /// /dev/shm once create has returned on every rank.
  ///
  /// `fencelessPublish` asks that a rank publish without a full fence, leaving it to a reader
  /// about to sleep (base/membarrier.h): a few ns less per call, worth it where each rank has a
  /// core and readers rarely sleep. The board does so only where every rank asked and can.
  static Result<std::unique_ptr<OneShotBoard>> create(uint64_t nonce, int rank, int nranks,
                                                      size_t maxBytes,
                                                      const std::function<Status()>& barrier,
                                                      uint32_t llFlagPeriod = kLlFlagPeriod,
                                                      bool fencelessPublish = false);

  OneShotBoard(const OneShotBoard&) = delete;
  OneShotBoard& operator=(const OneShotBoard&) = delete;
  ~OneShotBoard();

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  /// The most bytes (count * elemBytes) one call may reduce.
  size_t maxBytes() const { return maxBytes_; }
  /// Whether this board's ranks publish without a full fence (create's fencelessPublish).
  bool fencelessPublish() const { return fencelessPublish_; }
  /// Calls made so far (those that returned an error before publishing
  /// anything, and those of 0 elements, do not count).
  uint64_t calls() const { return calls_; }

  /// output = the fold over all ranks of pre(input_r), `count` elements of
  /// `elemBytes` (1, 2, 4 or 8) each, with count * elemBytes <= maxBytes().
  /// `output` may equal `input`. Every rank must make the call with the same
  /// count, element type, operator and protocol. A wait that runs past
  /// `wait.deadline` or sees the abort flag fails with kRemoteError naming
  /// the peer; the board is unusable after that (its peers may be mid-call),
  /// and later calls fail with kInvalidUsage.
  /// A wait that does not succeed at once is noted in `record` (the flight recorder's, for a
  /// dump to say whom the call waits for) while it lasts; null: not noted.
  Status allReduce(const void* input, void* output, size_t count, size_t elemBytes,
                   const kernels::HostOp& op, algo::Protocol protocol,
                   const transport::WaitContext& wait,
                   kernels::engine::WaitRecord* record = nullptr);

  /// allReduce in its two halves, for a caller with work to do while this rank's input
  /// travels to the peers (comm/tiny_lane.h records the call there): begin checks the call
  /// and publishes the input, complete reads the peers' inputs and writes the result.
  /// complete must follow a successful begin, with the same arguments.
  Status begin(const void* input, void* output, size_t count, size_t elemBytes,
               const kernels::HostOp& op, algo::Protocol protocol);
  Status complete(const void* input, void* output, size_t count, size_t elemBytes,
                  const kernels::HostOp& op, algo::Protocol protocol,
                  const transport::WaitContext& wait,
                  kernels::engine::WaitRecord* record = nullptr);

 private:
  struct Rank;   // one rank's mapped segment (one_shot.cc)
  struct Chunk;  // where one chunk lies in the message
  class LlFlagClock;

  OneShotBoard(int rank, int nranks, size_t maxBytes, uint32_t llFlagPeriod);

  void publish(const char* input, size_t bytes, size_t count, size_t elemBytes,
               const kernels::HostOp& op, algo::Protocol protocol);
  Status waitForPublished(int peer, const transport::WaitContext& wait);
  Status gatherChunk(const Chunk& chunk, const char* input, const kernels::HostOp& op,
                     algo::Protocol protocol, const transport::WaitContext& wait);
  /// waitForPeer, noted in record_ unless ready() holds at once.
  template <typename Ready>
  Status waitNoted(int peer, const transport::WaitContext& wait, Ready ready);

  int rank_;
  int nranks_;
  size_t maxBytes_;
  uint64_t calls_ = 0;
  Status broken_;  ///< the first failure of a call; calls after it are refused
  bool fencelessPublish_ = false;
  kernels::engine::WaitRecord* record_ = nullptr;  ///< the running call's (complete's record)
  std::vector<Rank> ranks_;
  std::unique_ptr<LlFlagClock> llClock_;
  InOrderFold fold_;  ///< one chunk's operands and partial results
};

}  // namespace braid::exec
