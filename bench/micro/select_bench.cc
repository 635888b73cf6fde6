// braid-select-bench: what choosing an algorithm and protocol costs per call,
// against the communicator's cache of the answers (ChoiceCache, src/comm/selector.h).
//
// Every collective asks the selector (tune::choose, src/tune/select.h) for the
// fastest allowed (algorithm, protocol); choose runs the cost model for every
// allowed pair. A small all_reduce takes a few microseconds in all, so this
// times choose on the queries a communicator makes: all_reduce of 8 B and
// 1 MiB at 4 ranks on 2 cores (more ranks than cores, as on the development
// VM), with everything allowed and the one-shot board's 64 KiB limit, and a
// broadcast (ring only, as the communicator restricts rooted collectives).
//
// The implChoose benchmarks call comm::Selector::choose, the path every
// collective takes, on a selector set up as Comm::create and Links::connectRing
// leave rank 0 of 4 on 2 cores with a one-shot board, without a bootstrap or
// shared memory, which choose does not need. `cached_N_sizes` cycles through N
// all_reduce sizes, N no more than the cache holds, so every call after the
// first round finds its answer N-1 entries deep (a training step's round of
// sizes); `missed_9_sizes` cycles through one size more than the cache
// holds, so every call misses and pays for the scan, choose and the insertion.
//
// `tuner_*` do the same with a tuner plugin's session (src/tune/plugin): a v6 table written
// here, through braid's adapter, whose getCollInfo makes the tree's Simple entry cheapest, so
// that every call pays what a tuned call pays beyond the cache: a copy of the kept cost table,
// the plugin's call and the reading of its answer.
//
//   build/bin/braid-select-bench [--benchmark_min_time=0.3] [--benchmark_repetitions=3]
#include <benchmark/benchmark.h>

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "comm/selector.h"
#include "tune/cost_model.h"
#include "tune/plugin/tuner_abi.h"
#include "tune/plugin/tuner_plugin.h"
#include "tune/plugin/tuner_session.h"
#include "tune/select.h"

namespace {

using braid::Collective;
using braid::CollectiveCall;
using braid::DataType;
using braid::comm::Selector;
namespace algo = braid::algo;
namespace tune = braid::tune;

// The model a 4-rank communicator on a 2-core host holds (comm/links.cc sets hostCores).
tune::Model benchModel() {
  tune::Model model = tune::Model::calibratedDefaults();
  model.hostCores = 2;
  return model;
}

tune::Query query(Collective collective, size_t bytes) {
  tune::Query q;
  q.collective = collective;
  q.bytes = bytes;
  q.nranks = 4;
  q.nchannels = 1;
  return q;
}

// Everything allowed, one-shot up to the board's default size, as connectRing leaves it.
tune::Allowed allAllowed() {
  tune::Allowed allowed;
  allowed.oneShotMaxBytes = 65536;
  return allowed;
}

// Broadcast with BRAID_ALGO unset: the communicator takes the tree out (src/comm/selector.cc).
tune::Allowed rootedAllowed() {
  tune::Allowed allowed = allAllowed();
  allowed.algorithm[static_cast<int>(algo::Algorithm::kTree)] = false;
  return allowed;
}

void choose(benchmark::State& state, Collective collective, size_t bytes, tune::Allowed allowed) {
  const tune::Model model = benchModel();
  const tune::Query q = query(collective, bytes);
  for (auto _ : state) {
    auto choice = tune::choose(model, q, allowed);
    if (!choice.ok()) {
      state.SkipWithError(choice.status().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(choice);
  }
}

BENCHMARK_CAPTURE(choose, all_reduce_8B, Collective::kAllReduce, 8, allAllowed());
BENCHMARK_CAPTURE(choose, all_reduce_1MiB, Collective::kAllReduce, size_t(1) << 20, allAllowed());
BENCHMARK_CAPTURE(choose, broadcast_4KiB, Collective::kBroadcast, 4096, rootedAllowed());

namespace abi = braid::tunerabi;

// The bench's tuner: the tree's Simple entry costs nothing, where braid offered it.
ncclResult_t benchInit(void** context, uint64_t, size_t, size_t, abi::ncclDebugLogger_t,
                       abi::ncclNvlDomainInfo_v5_t*, abi::ncclTunerConstants_v5_t*) {
  *context = nullptr;
  return ncclSuccess;
}
ncclResult_t benchCollInfo(void*, abi::ncclFunc_t, size_t, int, float** costTable, int, int, int,
                           int*) {
  auto table = reinterpret_cast<float(*)[abi::NCCL_NUM_PROTOCOLS]>(costTable);
  float& tree = table[abi::NCCL_ALGO_TREE][abi::NCCL_PROTO_SIMPLE];
  if (tree != abi::NCCL_ALGO_PROTO_IGNORE) tree = 0;
  return ncclSuccess;
}
ncclResult_t benchFinalize(void*) { return ncclSuccess; }
const abi::ncclTuner_v6_t kBenchTuner = {"bench", benchInit, benchCollInfo, benchFinalize, nullptr};

std::unique_ptr<tune::TunerSession> benchTuner() {
  std::shared_ptr<tune::TunerPlugin> plugin = tune::adoptTunerTable(6, &kBenchTuner, "bench");
  tune::TunerPlugin& table = *plugin;
  return tune::TunerSession::open(std::move(plugin), table, tune::TunerInit{});
}

// A communicator's selector as Comm::create and Links::connectRing leave it for rank 0 of 4 on 2
// cores, everything allowed; with the bench's tuner when `tuned`.
std::unique_ptr<Selector> benchSelector(bool tuned = false) {
  braid::comm::SelectorSettings settings;
  settings.nranks = 4;
  settings.nchannels = 1;
  settings.model = benchModel();
  settings.allowed = allAllowed();
  settings.oneShotBoard = true;
  return std::make_unique<Selector>(settings, tuned ? benchTuner() : nullptr);
}

// Selector::choose on all_reduce calls of float counts cycling through `sizes` distinct ones.
void implChoose(benchmark::State& state, size_t sizes, bool tuned = false) {
  std::unique_ptr<Selector> impl = benchSelector(tuned);
  std::vector<CollectiveCall> calls;
  for (size_t i = 0; i < sizes; ++i) {
    const size_t count = size_t(2) << (2 * i);  // 8 B, 32 B, ... 4^i apart
    calls.push_back({Collective::kAllReduce, nullptr, nullptr, count, DataType::kFloat32,
                     braid::RedOp::kSum, -1});
  }
  size_t next = 0;
  for (auto _ : state) {
    auto choice = impl->choose(calls[next]);
    if (!choice.ok()) {
      state.SkipWithError(choice.status().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(choice);
    next = next + 1 == calls.size() ? 0 : next + 1;
  }
}

BENCHMARK_CAPTURE(implChoose, cached_1_size, 1);
BENCHMARK_CAPTURE(implChoose, cached_4_sizes, 4);
BENCHMARK_CAPTURE(implChoose, cached_8_sizes, braid::comm::ChoiceCache::kEntries);
BENCHMARK_CAPTURE(implChoose, missed_9_sizes, braid::comm::ChoiceCache::kEntries + 1);
BENCHMARK_CAPTURE(implChoose, tuner_cached_1_size, 1, true);
BENCHMARK_CAPTURE(implChoose, tuner_cached_8_sizes, braid::comm::ChoiceCache::kEntries, true);
BENCHMARK_CAPTURE(implChoose, tuner_missed_9_sizes, braid::comm::ChoiceCache::kEntries + 1, true);

}  // namespace

BENCHMARK_MAIN();
