#include "transport/net/plugin/plugin_proxy.h"

#include "transport/net/proxy_waits.h"

namespace braid::transport::plugin {

PluginProxy::PluginProxy() : thread_([this] { run(); }) {}

PluginProxy::~PluginProxy() {
  stopping_.store(true);
  pacing_.wake();
  thread_.join();
}

void PluginProxy::add(PluginEndpoint* endpoint) {
  std::lock_guard<std::mutex> lock(mutex_);
  endpoints_.insert(endpoint);
}

void PluginProxy::remove(PluginEndpoint* endpoint) {
  std::lock_guard<std::mutex> lock(mutex_);
  endpoints_.erase(endpoint);
}

void PluginProxy::run() {
  while (!stopping_.load()) {
    pacing_.passStarts();
    bool moved = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (PluginEndpoint* endpoint : endpoints_) moved = endpoint->progress() || moved;
    }
    pacing_.passEnded(moved);
  }
}

}  // namespace braid::transport::plugin
