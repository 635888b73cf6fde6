// Completion queue sizes that follow the queue pairs on them: see ib_cq_capacity.h.
#include "transport/net/ib/ib_cq_capacity.h"

#include <errno.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/log.h"
#include "transport/net/ib/ib_device.h"

namespace braid::transport::ib {

int grownCqSize(int current, int needed, int max) {
  if (needed > max) return -1;
  int64_t size = current > 0 ? current : 1;
  while (size < needed) size *= 2;
  return static_cast<int>(std::min<int64_t>(size, max));
}

int CqCapacity::promised() const {
  std::lock_guard<std::mutex> lock(mu_);
  return promised_;
}

Result<ibv_qp*> createQueuePair(IbPort& port, ibv_qp_init_attr* init, int peer) {
  CqCapacity& capacity = port.completions;
  // The transport posts no more than it asked room for, whatever the HCA rounded the depths to.
  const int entries = static_cast<int>(init->cap.max_send_wr + init->cap.max_recv_wr);
  const std::string forPeer = " for rank " + std::to_string(peer);
  std::lock_guard<std::mutex> lock(capacity.mu_);
  const int needed = capacity.promised_ + entries;
  const int size = grownCqSize(port.cq->cqe, needed, capacity.max_);
  if (size < 0) {
    return systemError("verbs: a queue pair on " + port.name() + forPeer + " would need " +
                       std::to_string(needed) + " entries in the port's completion queue, over " +
                       "the device's max_cqe of " + std::to_string(capacity.max_) + " (" +
                       std::to_string(capacity.promised_) + " promised to its queue pairs " +
                       "already); use fewer queue pairs per connection " +
                       "(BRAID_IB_QPS_PER_CONNECTION) or more ports (BRAID_IB_HCA)");
  }
  if (size > port.cq->cqe) {
    const int before = port.cq->cqe;
    if (int rc = port.verbs().resizeCq(port.cq, size); rc != 0) {
      return systemError("verbs: growing the completion queue of " + port.name() + " from " +
                         std::to_string(before) + " to " + std::to_string(size) +
                         " entries (for a queue pair" + forPeer + "): " + std::strerror(rc));
    }
    BRAID_INFO("verbs: %s's completion queue grew from %d to %d entries (%d promised)",
               port.name().c_str(), before, port.cq->cqe, needed);
  }
  ibv_qp* qp = port.verbs().createQp(port.pd, init);
  if (qp == nullptr) {
    return systemError("verbs: a queue pair on " + port.name() + forPeer + ": " +
                       std::strerror(errno));
  }
  capacity.promised_ = needed;
  capacity.byQp_[qp] = entries;
  return qp;
}

void destroyQueuePair(IbPort& port, ibv_qp* qp) {
  CqCapacity& capacity = port.completions;
  std::lock_guard<std::mutex> lock(capacity.mu_);
  port.verbs().destroyQp(qp);
  auto found = capacity.byQp_.find(qp);
  if (found == capacity.byQp_.end()) return;
  capacity.promised_ -= found->second;
  capacity.byQp_.erase(found);
}

}  // namespace braid::transport::ib
