// The network plugin transport's proxy: one thread per loaded plugin (per process, shared by its
// communicators) that drives every FIFO end over the plugin, as the verbs proxy does for verbs
// (ib/ib_proxy.h) and for the same reason: a plugin's requests finish only when `test` says so,
// and there is nothing to block on for them and the local FIFOs together, so the thread polls.
// One polling thread for all ends, not one per end. It pauses only when no end moved
// (net::PollPauses), and longer after a long idle spell.
#pragma once

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "transport/net/proxy_waits.h"

namespace braid::transport::plugin {

/// Something the proxy drives: one FIFO end.
class PluginEndpoint {
 public:
  virtual ~PluginEndpoint() = default;
  /// On the proxy thread: moves what can move now (never blocks); true if anything did.
  virtual bool progress() = 0;
};

class PluginProxy {
 public:
  PluginProxy();
  ~PluginProxy();
  PluginProxy(const PluginProxy&) = delete;
  PluginProxy& operator=(const PluginProxy&) = delete;

  /// Starts driving `endpoint`.
  void add(PluginEndpoint* endpoint);
  /// Stops driving it: once this returns the thread no longer touches it.
  void remove(PluginEndpoint* endpoint);
  /// From any thread: work is coming (a call starts), so the proxy stops pausing now.
  void expectWork() { pacing_.wake(); }

 private:
  void run();

  std::mutex mutex_;  // held for a whole pass, so remove() waits for the pass to end
  std::set<PluginEndpoint*> endpoints_;
  std::atomic<bool> stopping_{false};
  net::PolledPacing pacing_;  // its pauses, as the verbs proxy's; wake() from any thread
  std::thread thread_;
};

}  // namespace braid::transport::plugin
