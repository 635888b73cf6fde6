// How many completions a port's completion queue must be able to hold, and growing it before it
// could overrun.
//
// Every FIFO end's queue pairs complete into their port's one CQ (ib_proxy.h). A CQ that
// overruns is lost: the HCA puts it in error, every poll fails, and every connection on the
// port stops (an IBV_EVENT_CQ_ERR, ib_async_events.h). It cannot overrun while it has room for
// every request its queue pairs can have outstanding at once, the sum of their send and receive
// depths. So each queue pair is created through createQueuePair, which counts its depths
// against the port's CQ and grows the CQ first (ibv_resize_cq, doubling, up to the device's
// max_cqe) where they would not fit; where even max_cqe is too few, it refuses the queue pair
// with an error that names the port, the entries needed and the limit, before anything could
// overrun. destroyQueuePair gives the entries back (the CQ keeps its size).
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

#include "braid/status.h"
#include "transport/net/ib/verbs_api.h"

namespace braid::transport::ib {

class IbPort;

/// The CQ size to grow from `current` entries to hold `needed`: `current` when it does already,
/// else the smallest of current * 2^k that does, capped at `max`; -1 when `needed` is over `max`.
int grownCqSize(int current, int needed, int max);

/// One port CQ's count of entries promised to its queue pairs.
class CqCapacity {
 public:
  /// The device's max_cqe (ibv_device_attr), the most the CQ may grow to.
  void setLimit(int maxCqe) { max_ = maxCqe; }
  int limit() const { return max_; }
  /// Entries promised to the queue pairs on the CQ now.
  int promised() const;

 private:
  friend Result<ibv_qp*> createQueuePair(IbPort& port, ibv_qp_init_attr* init, int peer);
  friend void destroyQueuePair(IbPort& port, ibv_qp* qp);

  mutable std::mutex mu_;  // held across the resize and the creation, so promises never race
  int max_ = 0;
  int promised_ = 0;
  std::unordered_map<ibv_qp*, int> byQp_;
};

/// ibv_create_qp on `port`'s PD with `init`, both CQs `port`'s CQ, grown first where the queue
/// pair's depths would not fit in it; errors name the port and rank `peer`.
Result<ibv_qp*> createQueuePair(IbPort& port, ibv_qp_init_attr* init, int peer);
/// ibv_destroy_qp of a queue pair createQueuePair made, giving its CQ entries back.
void destroyQueuePair(IbPort& port, ibv_qp* qp);

}  // namespace braid::transport::ib
