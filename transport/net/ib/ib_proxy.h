// The verbs transport's proxy: one thread per set of ports (per process, ib_port_set.h) that
// drives every FIFO end the process's communicators have over verbs.
//
// Why one polling thread, where the socket transport has one per FIFO end: a socket
// proxy blocks in the one place it can next progress (its FIFO's futex, its socket), so a thread
// each costs nothing while idle. A verbs proxy has two things to watch per end (the local FIFO's
// counters and the completion queue) and nothing to block on for both, so it polls; one thread
// polling every end and one completion queue per port is one poller, not one per end. It polls
// the CQs, hands each completion to the end that posted it (its wr_id names the end), lets every
// end post what it can, and pauses only when nothing moved (net::PolledPacing: a few yields,
// then sleeps that grow to 50 us, and 1 ms ones after a long idle spell); a call about to give
// it work rings its doorbell first (expectWork), which ends any pause at once. It runs on the CPUs
// near the first port (near_cpus.h). One per process rather than per communicator: the
// communicators share their ports' CQs, and a CQ has one poller, or completions go to the wrong
// one.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "transport/net/ib/ib_async_events.h"
#include "transport/net/ib/ib_device.h"
#include "transport/net/proxy_waits.h"

namespace braid::transport::ib {

/// Something the proxy drives: one FIFO end.
class IbEndpoint {
 public:
  virtual ~IbEndpoint() = default;
  /// On the proxy thread: moves what can move now (never blocks); true if anything did.
  virtual bool progress() = 0;
  /// On the proxy thread: a completion of a work request this end posted, with the low 32 bits
  /// of the wr_id it gave (IbProxy::wrId).
  virtual void completed(const ibv_wc& wc, uint32_t tag) = 0;
  /// On the proxy thread: an asynchronous event ended a port or a queue pair (IbProxy::failAsync);
  /// an end that uses it fails.
  virtual void asyncFailure(const IbAsyncFailure& failure) = 0;
};

class IbProxy {
 public:
  explicit IbProxy(std::vector<IbPort*> ports);
  ~IbProxy();
  IbProxy(const IbProxy&) = delete;
  IbProxy& operator=(const IbProxy&) = delete;

  /// An id for an endpoint, for its wr_ids: taken before it posts anything (receives), and
  /// before the proxy drives it.
  uint32_t newId() { return nextId_.fetch_add(1); }
  /// Starts driving `endpoint` under `id`.
  void add(uint32_t id, IbEndpoint* endpoint);
  /// Stops driving it: once this returns the thread no longer touches it, and completions still
  /// to come for it are dropped.
  void remove(uint32_t id);
  /// From any thread (the async event watcher's): every endpoint hears of `failure` on the
  /// proxy's thread at its next pass, and so does every endpoint added later when it names a
  /// whole port, which stays down.
  void failAsync(IbAsyncFailure failure);
  /// From any thread: `port` is active again; endpoints added from now on may use it (those
  /// that failed stay failed).
  void portBack(const IbPort* port);
  /// From any thread: work is coming (a call starts), so the proxy stops pausing now.
  void expectWork() { pacing_.wake(); }
  static uint64_t wrId(uint32_t endpoint, uint32_t tag) {
    return (static_cast<uint64_t>(endpoint) << 32) | tag;
  }

 private:
  void run();
  bool pollCompletions();
  /// Hands the failures of failAsync to the endpoints; under mutex_.
  void deliverAsyncFailures();

  std::vector<IbPort*> ports_;
  std::vector<bool> failed_;  // a port whose CQ failed, no longer polled
  std::mutex mutex_;          // held for a whole pass, so remove() waits for the pass to end
  std::map<uint32_t, IbEndpoint*> endpoints_;
  std::vector<uint32_t> added_;            // endpoints not yet told of the down ports; mutex_
  std::vector<IbAsyncFailure> downPorts_;  // every port-wide failure so far; proxy thread only
  std::mutex asyncMu_;
  struct AsyncNews {
    IbAsyncFailure failure;  // failure.port alone, when the port came back
    bool portBack = false;
  };
  std::vector<AsyncNews> asyncNews_;  // not yet delivered; asyncMu_
  std::atomic<bool> asyncPending_{false};
  std::atomic<uint32_t> nextId_{1};
  std::atomic<bool> stopping_{false};
  net::PolledPacing pacing_;  // its pauses; wake() from any thread
  std::thread thread_;
};

}  // namespace braid::transport::ib
