#include "braid_work.h"

#include <utility>

#include <ATen/core/jit_type.h>

namespace braid_torch {

BraidWork::BraidWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type),
      outputs_(std::move(outputs)),
      future_(
          c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {
}

void BraidWork::complete(std::exception_ptr error) {
  finish(error);
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
}

c10::intrusive_ptr<BraidWork> queueWork(WorkQueue& queue, int rank, c10d::OpType type,
                                        std::vector<at::Tensor> outputs,
                                        std::function<void()> body) {
  auto work = c10::make_intrusive<BraidWork>(rank, type, std::move(outputs));
  queue.push([work, body = std::move(body)] {
    std::exception_ptr error;
    try {
      body();
    } catch (...) {
      error = std::current_exception();
    }
    work->complete(error);
  });
  return work;
}

}  // namespace braid_torch
