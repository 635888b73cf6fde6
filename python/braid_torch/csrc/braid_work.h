// BraidWork: the handle torch.distributed returns for one operation of a braid process group.
//
// c10d::Work already is the waitable part (wait, isCompleted, isSuccess, exception); BraidWork
// adds the future that DDP's reducer chains its gradient callbacks on (getFuture), completed with
// the operation's output tensors, as ProcessGroupGloo's is.
#pragma once

#include <exception>
#include <functional>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "work_queue.h"

namespace braid_torch {

class BraidWork : public c10d::Work {
 public:
  BraidWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs);

  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

  /// Called once, on the queue's thread, when the operation has ended: `error` is null when it
  /// succeeded. Wakes wait() and then completes the future (its callbacks run on this thread).
  void complete(std::exception_ptr error);

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

/// Queues `body` on `queue` behind what was queued before and returns its work, which completes
/// with `outputs` when body has run, or with the exception body threw.
c10::intrusive_ptr<BraidWork> queueWork(WorkQueue& queue, int rank, c10d::OpType type,
                                        std::vector<at::Tensor> outputs,
                                        std::function<void()> body);

}  // namespace braid_torch
