// braid-one-shot-bench: the time of one one-shot all_reduce (src/exec/one_shot.h)
// of float sums, Simple against LL, for 8 B to 64 KiB and 2 to 8 ranks.
//
// The benchmark thread is rank 0; ranks 1..N-1 are threads that make the
// same number of calls. Each iteration is one call on rank 0, which returns
// once it has read every peer's input, so the time per iteration is the
// latency of the collective as rank 0 sees it in a loop of back-to-back
// calls. The waits spin for up to 1 ms before they yield: with a free core
// per rank this measures the board; with fewer cores than ranks it measures
// mostly the scheduler.
//
//   build/bin/braid-one-shot-bench [--benchmark_filter=ll/ranks:4] [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "exec/one_shot.h"
#include "kernels/host_reduce.h"

namespace {

using braid::Status;
using braid::algo::Protocol;
using braid::exec::OneShotBoard;

// The bootstrap barrier's stand-in for ranks that are threads of one process.
class ThreadBarrier {
 public:
  explicit ThreadBarrier(int n) : n_(n) {}
  Status wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t generation = generation_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return Status();
    }
    // A rank whose board failed before the barrier never comes.
    if (!cv_.wait_for(lock, std::chrono::seconds(30), [&] { return generation_ != generation; })) {
      return braid::remoteError("benchmark barrier: a rank never arrived");
    }
    return Status();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int n_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

braid::transport::WaitContext benchContext() {
  braid::transport::WaitContext wait;
  wait.deadline = braid::Deadline::afterMs(60000);
  wait.spinNs = 1000 * 1000;
  return wait;
}

void oneShot(benchmark::State& state, Protocol protocol) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const int nranks = static_cast<int>(state.range(1));
  const size_t count = bytes / sizeof(float);
  static std::atomic<uint32_t> counter{0};
  const uint64_t nonce = (static_cast<uint64_t>(getpid()) << 32) | counter.fetch_add(1);
  auto op = braid::kernels::hostOp(braid::DataType::kFloat32, braid::RedOp::kSum, {});
  if (!op.ok()) {
    state.SkipWithError(op.status().message().c_str());
    return;
  }

  // Every rank makes as many calls as rank 0's loop will: max_iterations.
  const uint64_t calls = static_cast<uint64_t>(state.max_iterations);
  ThreadBarrier barrier(nranks);
  std::atomic<bool> peerFailed{false};
  auto runPeer = [&](int rank) {
    auto board = OneShotBoard::create(nonce, rank, nranks, OneShotBoard::kDefaultMaxBytes,
                                      [&] { return barrier.wait(); });
    if (!board.ok()) {
      peerFailed.store(true);
      return;
    }
    std::vector<float> in(count, 1.0f), out(count);
    for (uint64_t i = 0; i < calls; ++i) {
      Status status = board.value()->allReduce(in.data(), out.data(), count, sizeof(float),
                                               op.value(), protocol, benchContext());
      if (!status.ok()) {
        peerFailed.store(true);
        return;
      }
    }
  };
  std::vector<std::thread> peers;
  for (int rank = 1; rank < nranks; ++rank) peers.emplace_back(runPeer, rank);

  auto board = OneShotBoard::create(nonce, 0, nranks, OneShotBoard::kDefaultMaxBytes,
                                    [&] { return barrier.wait(); });
  std::vector<float> in(count, 1.0f), out(count);
  for (auto _ : state) {
    if (!board.ok()) {
      state.SkipWithError(board.status().message().c_str());
      break;
    }
    Status status = board.value()->allReduce(in.data(), out.data(), count, sizeof(float),
                                             op.value(), protocol, benchContext());
    if (!status.ok()) {
      state.SkipWithError(status.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  for (auto& peer : peers) peer.join();
  if (peerFailed.load()) state.SkipWithError("a peer rank's call failed");
  if (board.ok() && count > 0 && out[0] != static_cast<float>(nranks)) {
    state.SkipWithError("wrong sum");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int64_t nranks : {2, 4, 8}) {
    for (int64_t bytes : {8, 64, 1024, 4096, 16384, 65536}) b->Args({bytes, nranks});
  }
  b->ArgNames({"bytes", "ranks"})->UseRealTime();
}

BENCHMARK_CAPTURE(oneShot, simple, Protocol::kSimple)->Apply(shapes);
BENCHMARK_CAPTURE(oneShot, ll, Protocol::kLl)->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
