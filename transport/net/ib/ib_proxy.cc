#include "transport/net/ib/ib_proxy.h"

#include <chrono>

#include "base/deadline.h"
#include "base/log.h"
#include "topology/cpu_affinity.h"
#include "transport/net/ib/near_cpus.h"

namespace braid::transport::ib {

IbProxy::IbProxy(std::vector<IbPort*> ports)
    : ports_(std::move(ports)), failed_(ports_.size(), false) {
  thread_ = std::thread([this] { run(); });
}

IbProxy::~IbProxy() {
  stopping_.store(true);
  thread_.join();
}

void IbProxy::add(uint32_t id, IbEndpoint* endpoint) {
  std::lock_guard<std::mutex> lock(mutex_);
  endpoints_[id] = endpoint;
}

void IbProxy::remove(uint32_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  endpoints_.erase(id);
}

bool IbProxy::pollCompletions() {
  bool any = false;
  ibv_wc wc[32];
  for (size_t p = 0; p < ports_.size(); ++p) {
    IbPort* port = ports_[p];
    if (failed_[p]) continue;
    for (;;) {
      const int n = port->verbs().pollCq(port->cq, 32, wc);
      if (n < 0) {
        // Nothing on this port can complete any more: its FIFOs stop, and their executors time
        // out with their own deadlines. Said once, not on every pass.
        BRAID_WARN("verbs: polling the completion queue of %s failed; its FIFOs stop",
                   port->name().c_str());
        failed_[p] = true;
        break;
      }
      for (int i = 0; i < n; ++i) {
        auto found = endpoints_.find(static_cast<uint32_t>(wc[i].wr_id >> 32));
        if (found != endpoints_.end()) {
          found->second->completed(wc[i], static_cast<uint32_t>(wc[i].wr_id));
        }
      }
      any = any || n > 0;
      if (n < 32) break;
    }
  }
  return any;
}

void IbProxy::run() {
  if (!ports_.empty()) {
    const std::string device = ports_[0]->name().substr(0, ports_[0]->name().find(':'));
    const std::vector<int> near = cpusNearDevice("/sys", device, topology::allowedCpus());
    if (!near.empty()) {
      BRAID_INFO("verbs: proxy bound to the %zu CPUs of %s's NUMA node%s", near.size(),
                 device.c_str(), bindThisThread(near) ? "" : " (refused by the system)");
    }
  }
  auto pause = std::chrono::microseconds(1);
  int idlePasses = 0;
  Deadline idleSince = Deadline::afterMs(kIdleAfterMs);
  while (!stopping_.load()) {
    bool moved = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      moved = pollCompletions();
      for (auto& [id, endpoint] : endpoints_) moved = endpoint->progress() || moved;
    }
    if (moved) {
      pause = std::chrono::microseconds(1);
      idlePasses = 0;
      idleSince = Deadline::afterMs(kIdleAfterMs);
      continue;
    }
    if (++idlePasses < 16) {
      std::this_thread::yield();
    } else if (idleSince.expired()) {
      std::this_thread::sleep_for(std::chrono::microseconds(kIdlePauseUs));
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(kMaxPauseUs));
    }
  }
}

}  // namespace braid::transport::ib
