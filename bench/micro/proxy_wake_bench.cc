// braid-proxy-wake-bench: how long the verbs proxy (transport/net/ib/ib_proxy.h) takes to see
// work that comes after an idle spell, with and without the doorbell a call rings as it starts
// (IbProxy::expectWork, net::Doorbell).
//
// After 200 ms with nothing to move the proxy sleeps 1 ms between passes (net::PolledPacing), so
// work that comes then waits for the sleep to end: up to a millisecond, paid by the first
// collective after a compute phase. One iteration lets the proxy go idle (IDLE, 300 ms), then makes
// one endpoint ready and times until the proxy's pass finds it; `ring` rings the doorbell right
// after, as a call does, `no_ring` does not. The proxy drives no port here (an empty port list), so
// what is timed is its pause and its pass, nothing of a NIC.
//
//   build/bin/braid-proxy-wake-bench [--benchmark_repetitions=3]
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "transport/net/ib/ib_proxy.h"

namespace {

using braid::transport::ib::IbAsyncFailure;
using braid::transport::ib::IbEndpoint;
using braid::transport::ib::IbProxy;
using Clock = std::chrono::steady_clock;

constexpr auto kIdle = std::chrono::milliseconds(300);

/// An endpoint that moves one thing when told to, and notes when its proxy found it.
class ReadyOnce final : public IbEndpoint {
 public:
  void makeReady() {
    found_.store(false);
    ready_.store(true, std::memory_order_release);
  }
  bool found() const { return found_.load(std::memory_order_acquire); }
  Clock::time_point foundAt() const { return foundAt_; }

  bool progress() override {
    if (!ready_.exchange(false, std::memory_order_acq_rel)) return false;
    foundAt_ = Clock::now();
    found_.store(true, std::memory_order_release);
    return true;
  }
  void completed(const ibv_wc&, uint32_t) override {}
  void asyncFailure(const IbAsyncFailure&) override {}

 private:
  std::atomic<bool> ready_{false};
  std::atomic<bool> found_{false};
  Clock::time_point foundAt_;
};

void wakeAfterIdle(benchmark::State& state, bool ring) {
  IbProxy proxy(std::vector<braid::transport::ib::IbPort*>{});
  ReadyOnce endpoint;
  const uint32_t id = proxy.newId();
  proxy.add(id, &endpoint);
  for (auto _ : state) {
    std::this_thread::sleep_for(kIdle);
    const Clock::time_point t0 = Clock::now();
    endpoint.makeReady();
    if (ring) proxy.expectWork();
    while (!endpoint.found()) std::this_thread::yield();
    state.SetIterationTime(std::chrono::duration<double>(endpoint.foundAt() - t0).count());
  }
  proxy.remove(id);
}

void BM_ProxyWake_ring(benchmark::State& state) { wakeAfterIdle(state, true); }
void BM_ProxyWake_no_ring(benchmark::State& state) { wakeAfterIdle(state, false); }

BENCHMARK(BM_ProxyWake_ring)->UseManualTime()->Iterations(20)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ProxyWake_no_ring)->UseManualTime()->Iterations(20)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
