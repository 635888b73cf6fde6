// ProcessGroupBraid: torch.distributed's process group interface (c10d::ProcessGroup of PyTorch
// 1.13) on one braid communicator on host memory, for CPU tensors.
//
// Every operation is checked on the caller's thread (a bad argument raises at the call, as with
// Gloo) and then queued on the group's WorkQueue, whose thread makes the braid calls in issue
// order; the returned BraidWork completes when they have. Torch's list-of-tensors signatures
// take one tensor per rank here (as NCCL takes one per GPU): an all-gather's output is one list
// of size() tensors, not several.
//
// Operators braid has no wire form for (BAND, BOR, BXOR) gather every rank's operand and fold it
// with torch's operator: correct, at size() times the bytes of a reduction.
//
// Point-to-point runs on lanes of its own (p2p_lanes.h), one per peer and direction, so that
// an irecv queued before an isend does not hold the send back (as Gloo's would not). Tags are
// not matched: as in NCCL, messages from one rank to another arrive in the order they were sent.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "nccl.h"
#include "p2p_lanes.h"
#include "tensor_types.h"
#include "work_queue.h"

namespace braid_torch {

class ProcessGroupBraid : public c10d::ProcessGroup {
 public:
  /// A new communicator of `size` ranks that meet through `uniqueId` (ncclGetUniqueId's bytes,
  /// which rank 0 made and shared through `store`, the group's store, which the point-to-point
  /// lanes meet through later).
  static c10::intrusive_ptr<ProcessGroupBraid> create(c10::intrusive_ptr<c10d::Store> store,
                                                      const std::string& uniqueId, int rank,
                                                      int size);
  /// Wraps `comm` (owned from now on).
  ProcessGroupBraid(c10::intrusive_ptr<c10d::Store> store, ncclComm_t comm, int rank, int size);
  /// Runs what is queued, then destroys the communicator.
  ~ProcessGroupBraid() override;

  /// torch.distributed.new_group on a braid world: every rank of this group calls one of these,
  /// in the same order as its other operations. Members get a group of the ranks that called
  /// split(), ordered by `key` (their rank in the new group); the others call splitOut().
  /// `store` is the new group's.
  c10::intrusive_ptr<ProcessGroupBraid> split(c10::intrusive_ptr<c10d::Store> store, int key);
  void splitOut();

  const std::string getBackendName() const override { return "braid"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplits,
                                               std::vector<int64_t>& inputSplits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

 private:
  /// Queues `body` (run on the queue's thread; it throws on failure) behind every operation
  /// issued before; the work completes with `outputs` when it has run.
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, std::vector<at::Tensor> outputs,
                                         std::function<void()> body);
  /// Throws, naming `what` and braid's message, unless `result` is ncclSuccess.
  void check(ncclResult_t result, const char* what) const;
  void checkRank(int64_t rank, const char* what) const;

  // The calls themselves, on the queue's thread.
  void allReduceNow(const at::Tensor& tensor, const Reduction& reduction);
  void allGatherNow(const at::Tensor& input, const at::Tensor& output);
  void reduceScatterNow(const at::Tensor& input, const at::Tensor& output,
                        const Reduction& reduction);
  void allToAllVNow(const at::Tensor& input, const std::vector<size_t>& sendCounts,
                    const at::Tensor& output, const std::vector<size_t>& recvCounts);

  ncclComm_t comm_;
  std::unique_ptr<WorkQueue> queue_;
  std::unique_ptr<P2pLanes> lanes_;
};

}  // namespace braid_torch
