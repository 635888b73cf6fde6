#include "transport/net/ib/ib_proxy.h"

#include <algorithm>

#include "base/log.h"
#include "topology/cpu_affinity.h"
#include "transport/net/ib/near_cpus.h"
#include "transport/net/proxy_waits.h"

namespace braid::transport::ib {

IbProxy::IbProxy(std::vector<IbPort*> ports)
    : ports_(std::move(ports)), failed_(ports_.size(), false) {
  thread_ = std::thread([this] { run(); });
}

IbProxy::~IbProxy() {
  stopping_.store(true);
  pacing_.wake();
  thread_.join();
}

void IbProxy::add(uint32_t id, IbEndpoint* endpoint) {
  std::lock_guard<std::mutex> lock(mutex_);
  endpoints_[id] = endpoint;
  added_.push_back(id);
}

void IbProxy::failAsync(IbAsyncFailure failure) {
  std::lock_guard<std::mutex> lock(asyncMu_);
  asyncNews_.push_back({std::move(failure), false});
  asyncPending_.store(true);
}

void IbProxy::portBack(const IbPort* port) {
  std::lock_guard<std::mutex> lock(asyncMu_);
  AsyncNews news;
  news.failure.port = port;
  news.portBack = true;
  asyncNews_.push_back(std::move(news));
  asyncPending_.store(true);
}

void IbProxy::deliverAsyncFailures() {
  std::vector<AsyncNews> fresh;
  if (asyncPending_.exchange(false)) {
    std::lock_guard<std::mutex> lock(asyncMu_);
    fresh.swap(asyncNews_);
  }
  const auto isNew = [&](uint32_t id) {
    return std::find(added_.begin(), added_.end(), id) != added_.end();
  };
  // The news in the order it came: a port down, a port back, a queue pair failed.
  for (AsyncNews& news : fresh) {
    if (news.portBack) {
      const IbPort* port = news.failure.port;
      downPorts_.erase(std::remove_if(downPorts_.begin(), downPorts_.end(),
                                      [&](const IbAsyncFailure& f) { return f.port == port; }),
                       downPorts_.end());
      continue;
    }
    const bool wholePort = !news.failure.qpNum;
    for (auto& [id, endpoint] : endpoints_) {
      if (!wholePort || !isNew(id)) endpoint->asyncFailure(news.failure);
    }
    if (wholePort) downPorts_.push_back(std::move(news.failure));
  }
  // Endpoints added since the last pass learn of every port that is down now, once: it carries
  // nothing any more.
  for (uint32_t id : added_) {
    auto found = endpoints_.find(id);
    if (found == endpoints_.end()) continue;
    for (const IbAsyncFailure& down : downPorts_) found->second->asyncFailure(down);
  }
  added_.clear();
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
        // Nothing on this port can complete any more (an overrun puts a CQ in error; the CQ's
        // size follows its queue pairs so that none should, ib_cq_capacity.h): every FIFO end
        // on it fails now, as for a port that went down, rather than leave its calls to their
        // deadlines. Said once, not on every pass.
        BRAID_WARN("verbs: polling the completion queue of %s failed; its FIFOs stop",
                   port->name().c_str());
        failed_[p] = true;
        IbAsyncFailure failure;
        failure.port = port;
        failure.what = port->name() + "'s completion queue failed (ibv_poll_cq returned " +
                       std::to_string(n) + ")";
        for (auto& [id, endpoint] : endpoints_) endpoint->asyncFailure(failure);
        downPorts_.push_back(std::move(failure));
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
  while (!stopping_.load()) {
    pacing_.passStarts();
    bool moved = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      deliverAsyncFailures();
      moved = pollCompletions();
      for (auto& [id, endpoint] : endpoints_) moved = endpoint->progress() || moved;
    }
    pacing_.passEnded(moved);
  }
}

}  // namespace braid::transport::ib
