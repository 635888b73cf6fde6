// The point-to-point executor: runs a batch of sends and receives with
// several peers at once, as one group of ncclSend / ncclRecv calls.
//
// Unlike a schedule, a batch has no order that every rank agrees on: in a
// ring exchange every rank sends before it receives. So the executor never
// blocks on one connection: it advances whichever send or receive can move
// a slice now, and waits only when none can. Messages to one peer keep the
// order in which they were issued, as NCCL's do.
#pragma once

#include <cstddef>
#include <vector>

#include "braid/status.h"
#include "kernels/engine/launch.h"
#include "transport/connection.h"

namespace braid::exec {

struct P2pTask {
  bool send = false;
  int peer = -1;
  const void* sendBuffer = nullptr;  ///< for a send
  void* recvBuffer = nullptr;        ///< for a receive
  size_t bytes = 0;
};

/// Where the executor gets its connections. Both calls must not block:
/// connections to a peer are made the first time they are needed, and the
/// peer may not have made its end yet.
class P2pLinks {
 public:
  virtual ~P2pLinks() = default;
  /// The connection this rank receives on from `peer` (made if needed).
  virtual Result<transport::RecvEnd*> recvFrom(int peer) = 0;
  /// The connection to `peer`, or nullptr while `peer` has not made its end.
  virtual Result<transport::SendEnd*> trySendTo(int peer) = 0;
};

/// Runs every task of the batch to completion. Sends and receives with this
/// rank itself are matched in order and copied. A receive whose size differs
/// from what the peer sends fails with kInvalidUsage naming both sizes. When nothing can move,
/// the first unfinished transfer's peer is noted in `waitRecord` (the flight recorder's).
Status runP2p(int rank, const std::vector<P2pTask>& tasks, P2pLinks& links,
              const transport::WaitContext& wait,
              kernels::engine::WaitRecord* waitRecord = nullptr);

}  // namespace braid::exec
