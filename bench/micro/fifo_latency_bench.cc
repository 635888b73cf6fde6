// braid-fifo-latency-bench: the one-way latency of the shared-memory FIFOs,
// Simple against LL, for 8 B to 64 KiB messages.
//
// Two threads play ping-pong over two FIFOs of one protocol: the benchmark
// thread writes a message into its slot and posts it, an echo thread copies
// it into the FIFO going back, and the benchmark thread copies the echo out.
// Each copy is one an executor would make too, so the LL staging copies are
// counted against LL. One iteration is a round trip; `one_way` is half of
// the mean. The waits spin for 20 us before they yield, as the comm's do by
// default, so on an idle machine this measures the protocols, not the
// scheduler. On a busy one, a round trip that finds the peer's thread off
// its core costs a time slice and the mean measures the scheduler; `p10`
// and `p50` (half the 10th and 50th percentile round trip, timed one by one,
// which adds one clock read per trip) still show the protocols, from the
// trips where both threads ran.
//
//   build/bin/braid-fifo-latency-bench [--benchmark_filter=ll] [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "transport/connection.h"
#include "transport/shm/shm_fifo.h"
#include "transport/shm/shm_ll_fifo.h"

namespace {

using braid::transport::RecvEnd;
using braid::transport::SendEnd;
using braid::transport::WaitContext;
namespace shm = braid::transport::shm;

enum class Protocol { kSimple, kLl };

struct Fifo {
  std::unique_ptr<RecvEnd> recv;
  std::unique_ptr<SendEnd> send;
};

// Both ends of one FIFO in this process; the name is unlinked at once.
bool makeFifo(Protocol protocol, size_t slotBytes, Fifo* fifo, std::string* error) {
  static std::atomic<uint32_t> counter{0};
  uint64_t magic = (static_cast<uint64_t>(getpid()) << 32) | counter.fetch_add(1);
  const std::string name = shm::segmentName(magic, 0, 1, 0);
  auto recv = protocol == Protocol::kLl ? shm::createLlRecvEnd(name, slotBytes)
                                        : shm::createRecvEnd(name, slotBytes);
  if (!recv.ok()) {
    *error = recv.status().message();
    return false;
  }
  auto send = protocol == Protocol::kLl ? shm::openLlSendEnd(name, slotBytes)
                                        : shm::openSendEnd(name, slotBytes);
  if (!send.ok()) {
    *error = send.status().message();
    return false;
  }
  (void)shm::unlinkSegment(name);
  fifo->recv = std::move(recv).value();
  fifo->send = std::move(send).value();
  return true;
}

WaitContext benchContext() {
  WaitContext ctx;  // the default spin, as the comm's waits
  ctx.deadline = braid::Deadline::afterMs(60000);
  return ctx;
}

// Sends back every message from `in` over `out` until an empty one arrives.
void echo(RecvEnd& in, SendEnd& out, std::atomic<bool>* failed) {
  WaitContext ctx = benchContext();
  for (;;) {
    size_t bytes = 0;
    auto message = in.waitSlot(ctx, &bytes);
    if (!message.ok()) break;
    if (bytes == 0) {
      in.release();
      return;
    }
    auto reply = out.waitSlot(ctx);
    if (!reply.ok()) break;
    memcpy(reply.value(), message.value(), bytes);
    in.release();
    out.post(bytes);
  }
  failed->store(true);
}

void pingPong(benchmark::State& state, Protocol protocol) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  Fifo ping;
  Fifo pong;
  std::string error;
  if (!makeFifo(protocol, bytes, &ping, &error) || !makeFifo(protocol, bytes, &pong, &error)) {
    state.SkipWithError(error.c_str());
    return;
  }
  std::vector<unsigned char> source(bytes, 0x5a);
  std::vector<unsigned char> sink(bytes);
  std::atomic<bool> echoFailed{false};
  std::thread echoThread(echo, std::ref(*ping.recv), std::ref(*pong.send), &echoFailed);
  WaitContext ctx = benchContext();
  std::vector<int64_t> roundTripsNs;
  roundTripsNs.reserve(1 << 20);

  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    auto slot = ping.send->waitSlot(ctx);
    if (!slot.ok()) {
      state.SkipWithError(slot.status().message().c_str());
      break;
    }
    memcpy(slot.value(), source.data(), bytes);
    ping.send->post(bytes);
    size_t got = 0;
    auto reply = pong.recv->waitSlot(ctx, &got);
    if (!reply.ok() || got != bytes) {
      state.SkipWithError(reply.ok() ? "the echo has the wrong size"
                                     : reply.status().message().c_str());
      break;
    }
    memcpy(sink.data(), reply.value(), got);
    benchmark::DoNotOptimize(sink.data());
    pong.recv->release();
    roundTripsNs.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now() - start)
                               .count());
  }

  // An empty message stops the echo thread.
  if (ping.send->waitSlot(ctx).ok()) ping.send->post(0);
  echoThread.join();
  if (echoFailed.load()) state.SkipWithError("the echo thread's wait failed");
  state.counters["one_way"] = benchmark::Counter(
      2, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  if (!roundTripsNs.empty()) {
    std::sort(roundTripsNs.begin(), roundTripsNs.end());
    auto halfOfPercentile = [&](size_t percent) {
      return 0.5e-9 * static_cast<double>(roundTripsNs[roundTripsNs.size() * percent / 100]);
    };
    state.counters["p10"] = halfOfPercentile(10);
    state.counters["p50"] = halfOfPercentile(50);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 *
                          static_cast<int64_t>(bytes));
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int64_t bytes : {8, 64, 1024, 64 * 1024}) b->Arg(bytes);
  b->ArgName("bytes")->UseRealTime();
}

BENCHMARK_CAPTURE(pingPong, simple, Protocol::kSimple)->Apply(sizes);
BENCHMARK_CAPTURE(pingPong, ll, Protocol::kLl)->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();
