// The emulated completion queue: see emulated_cq.h.
#include "emulation/ib/emulated_cq.h"

#include <errno.h>

#include "base/log.h"
#include "emulation/ib/emulated_limits.h"

namespace braid::transport::ib::emulated {

CompletionQueue::CompletionQueue(ibv_context* context, int cqe, void* cqContext) {
  handle_.owner = this;
  handle_.verbs.context = context;
  handle_.verbs.cq_context = cqContext;
  handle_.verbs.cqe = cqe;
}

void CompletionQueue::push(const ibv_wc& wc) {
  std::lock_guard<std::mutex> lock(mu_);
  if (overrun_) return;
  if (entries_.size() >= static_cast<size_t>(handle_.verbs.cqe)) {
    overrun_ = true;
    entries_.clear();
    BRAID_WARN(
        "emulated HCA: completion queue of %d entries overran (a completion of QP %u found it "
        "full); it is in error and every poll fails from now on",
        handle_.verbs.cqe, wc.qp_num);
    return;
  }
  entries_.push_back(wc);
}

int CompletionQueue::resize(int cqe) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cqe < 1 || cqe > kMaxCqe || static_cast<size_t>(cqe) < entries_.size()) return EINVAL;
  handle_.verbs.cqe = cqe;
  return 0;
}

int CompletionQueue::poll(int entries, ibv_wc* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (overrun_ || entries < 0) return -1;
  int taken = 0;
  while (taken < entries && !entries_.empty()) {
    out[taken++] = entries_.front();
    entries_.pop_front();
  }
  return taken;
}

}  // namespace braid::transport::ib::emulated
