#include "transport/net/plugin/plugin_proxy.h"

#include <chrono>

#include "base/deadline.h"
#include "transport/net/proxy_waits.h"

namespace braid::transport::plugin {
namespace {

// After this long with nothing moving the thread sleeps kIdlePauseUs between passes: an idle
// process keeps a core free; a call rings the doorbell as it starts (expectWork), which ends the
// sleep, so the first slot after the spell does not wait it out.
constexpr int64_t kIdleAfterMs = 200;
constexpr int kIdlePauseUs = 1000;

}  // namespace

PluginProxy::PluginProxy() : thread_([this] { run(); }) {}

PluginProxy::~PluginProxy() {
  stopping_.store(true);
  doorbell_.ring();
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
    const uint32_t rung = doorbell_.rung();
    bool moved = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (PluginEndpoint* endpoint : endpoints_) moved = endpoint->progress() || moved;
    }
    if (moved || doorbell_.rung() != rung) {
      pauses.reset();
      idleFrom = Deadline::afterMs(kIdleAfterMs);
      continue;
    }
    pauses.pauseWith(std::chrono::microseconds(idleFrom.expired() ? kIdlePauseUs : 0),
                     [&](std::chrono::microseconds d) { doorbell_.sleep(rung, d); });
  }
}

}  // namespace braid::transport::plugin
