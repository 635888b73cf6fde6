// P2pLanes: where a process group's sends and receives run.
//
// torch.distributed's users post receives before sends (`irecv` then `isend`, both ways at
// once) and expect both to progress, as they do on Gloo. On the group's one queue the first
// receive would block the thread the matching send of this rank waits behind, on both ranks.
// So point-to-point traffic runs on lanes: one per peer and direction, each a two-rank braid
// communicator (the sender is its rank 0) with a queue of its own. Messages of one lane keep
// their order, which is how NCCL matches sends to receives; lanes never wait for each other.
//
// A lane is made by the first send to a peer and, on the peer, by the first receive from this
// rank: the sender puts a unique id in the group's store, the receiver reads it (waiting for it
// as the store's get does). Both happen on the lane's own thread, so no call blocks.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "nccl.h"
#include "work_queue.h"

namespace braid_torch {

class P2pLanes {
 public:
  P2pLanes(c10::intrusive_ptr<c10d::Store> store, int rank);
  /// Waits for every queued send and receive, then destroys the lanes' communicators.
  ~P2pLanes();

  c10::intrusive_ptr<c10d::Work> send(const at::Tensor& tensor, int peer);
  c10::intrusive_ptr<c10d::Work> recv(const at::Tensor& tensor, int peer);

 private:
  struct Lane {
    ~Lane();
    ncclComm_t comm = nullptr;         // made by the lane's first job
    std::string failure;               // why making it failed, for every later job to report
    std::unique_ptr<WorkQueue> queue;  // destroyed (drained) before the communicator
  };

  /// The lane to (sending) or from `peer`, made on first use.
  Lane& lane(int peer, bool sending);
  /// On the lane's thread: meets the peer through the store and makes the communicator.
  void connect(Lane& lane, int peer, bool sending);

  c10::intrusive_ptr<c10d::Store> store_;
  int rank_;
  std::mutex mutex_;
  std::map<std::pair<int, bool>, std::unique_ptr<Lane>> lanes_;
};

}  // namespace braid_torch
