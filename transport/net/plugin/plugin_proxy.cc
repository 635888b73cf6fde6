#include "transport/net/plugin/plugin_proxy.h"

#include <chrono>

#include "base/deadline.h"
#include "transport/net/proxy_waits.h"

namespace braid::transport::plugin {
namespace {

// After this long with nothing moving the thread sleeps kIdlePauseUs between passes: an idle
// process keeps a core free, and the first slot after the spell waits at most that long.
constexpr int64_t kIdleAfterMs = 200;
constexpr int kIdlePauseUs = 1000;

}  // namespace

PluginProxy::PluginProxy() : thread_([this] { run(); }) {}

PluginProxy::~PluginProxy() {
  stopping_.store(true);
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
  net::PollPauses pauses;
  Deadline idleFrom = Deadline::afterMs(kIdleAfterMs);
  while (!stopping_.load()) {
    bool moved = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (PluginEndpoint* endpoint : endpoints_) moved = endpoint->progress() || moved;
    }
    if (moved) {
      pauses.reset();
      idleFrom = Deadline::afterMs(kIdleAfterMs);
      continue;
    }
    pauses.pause(std::chrono::microseconds(idleFrom.expired() ? kIdlePauseUs : 0));
  }
}

}  // namespace braid::transport::plugin
