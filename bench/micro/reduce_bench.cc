// braid-reduce-bench: how close the host reduction loops come to memory
// bandwidth. For each datatype, the sum of two 64 MiB arrays into a third
// (HostOp::reduce, the loop the executors run), next to memcpy and copyBytes
// of 64 MiB, all in one binary so the numbers compare.
//
// Bytes count everything read and written: 3 x 64 MiB per sum, 2 x 64 MiB per
// copy. The `x_memcpy` counter is a benchmark's bytes/s over memcpy's,
// measured once before the first benchmark: 1.0 means the loop runs at memcpy speed, i.e. is
// bound by memory, not by arithmetic.
//
//   build/bin/braid-reduce-bench [--benchmark_filter=sum/half] [--benchmark_min_time=1]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "braid/types.h"
#include "kernels/float_types.h"
#include "kernels/host_reduce.h"

namespace {

using braid::DataType;
using braid::RedOp;
namespace kernels = braid::kernels;

constexpr size_t kBytes = size_t(64) << 20;

/// Three 64 MiB arrays, touched once so that page faults stay out of the timings.
struct Arrays {
  std::vector<uint64_t> a, b, c;
  Arrays() : a(kBytes / 8), b(kBytes / 8), c(kBytes / 8) {}
};

Arrays& arrays() {
  static Arrays arr;
  return arr;
}

/// Fills `bytes` with the element value 1.5 (3 for integers): no denormals,
/// no NaNs, nothing that could take a slow path.
void fillOnes(DataType type, void* p, size_t bytes) {
  const size_t n = bytes / braid::dataTypeSize(type);
  auto fill = [&](auto value) {
    auto* t = static_cast<decltype(value)*>(p);
    std::fill(t, t + n, value);
  };
  switch (type) {
    case DataType::kFloat16:
      return fill(kernels::Float16::fromFloat(1.5f));
    case DataType::kBfloat16:
      return fill(kernels::Bfloat16::fromFloat(1.5f));
    case DataType::kFloat8e4m3:
      return fill(kernels::Float8e4m3::fromFloat(1.5f));
    case DataType::kFloat8e5m2:
      return fill(kernels::Float8e5m2::fromFloat(1.5f));
    case DataType::kFloat32:
      return fill(1.5f);
    case DataType::kFloat64:
      return fill(1.5);
    default:
      memset(p, 3, bytes);
      return;
  }
}

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

/// memcpy's bytes/s (read + written) over a few back-to-back copies, after
/// two untimed ones: the yardstick of every x_memcpy counter.
double memcpyRate() {
  static const double rate = [] {
    Arrays& arr = arrays();
    constexpr int kWarmup = 2, kTimed = 10;
    for (int i = 0; i < kWarmup; ++i) memcpy(arr.c.data(), arr.a.data(), kBytes);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kTimed; ++i) {
      memcpy(arr.c.data(), arr.a.data(), kBytes);
      benchmark::ClobberMemory();
    }
    return 2.0 * kBytes * kTimed / seconds(std::chrono::steady_clock::now() - t0);
  }();
  return rate;
}

/// Times `body` the way Google Benchmark runs it and reports bytes/s and the
/// ratio to memcpy.
template <typename Body>
void measure(benchmark::State& state, size_t bytesPerIteration, Body&& body) {
  const double reference = memcpyRate();
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    body();
    benchmark::ClobberMemory();
  }
  const double elapsed = seconds(std::chrono::steady_clock::now() - t0);
  const double bytes = static_cast<double>(bytesPerIteration) * state.iterations();
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["x_memcpy"] = elapsed > 0 ? bytes / elapsed / reference : 0;
}

void benchMemcpy(benchmark::State& state) {
  Arrays& arr = arrays();
  measure(state, 2 * kBytes, [&] { memcpy(arr.c.data(), arr.a.data(), kBytes); });
}

void benchCopyBytes(benchmark::State& state) {
  Arrays& arr = arrays();
  measure(state, 2 * kBytes, [&] { kernels::copyBytes(arr.c.data(), arr.a.data(), kBytes); });
}

/// c = a + b (or a = a + b when `inPlace`) over 64 MiB arrays of `type`.
void benchSum(benchmark::State& state, DataType type, bool inPlace) {
  Arrays& arr = arrays();
  auto op = kernels::hostOp(type, RedOp::kSum, kernels::OpArgs{});
  if (!op.ok()) {
    state.SkipWithError(op.status().message().c_str());
    return;
  }
  const kernels::HostOp& h = op.value();
  fillOnes(type, arr.a.data(), kBytes);
  fillOnes(type, arr.b.data(), kBytes);
  const size_t count = kBytes / braid::dataTypeSize(type);
  void* dst = inPlace ? arr.a.data() : arr.c.data();
  measure(state, 3 * kBytes, [&] { h.reduce(h.args, dst, arr.a.data(), arr.b.data(), count); });
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  (void)arrays();  // allocate and fault in the arrays before anything is timed
  for (auto* v : {&arrays().a, &arrays().b, &arrays().c}) std::fill(v->begin(), v->end(), 1);
  benchmark::RegisterBenchmark("memcpy/64MiB", benchMemcpy)->UseRealTime();
  benchmark::RegisterBenchmark("copyBytes/64MiB", benchCopyBytes)->UseRealTime();
  for (int t = 0; t < braid::kNumDataTypes; ++t) {
    const auto type = static_cast<DataType>(t);
    const std::string name = std::string("sum/") + braid::dataTypeName(type) + "/64MiB";
    benchmark::RegisterBenchmark(name.c_str(), benchSum, type, false)->UseRealTime();
  }
  for (DataType type : {DataType::kFloat32, DataType::kFloat16, DataType::kBfloat16}) {
    const std::string name = std::string("sum_in_place/") + braid::dataTypeName(type) + "/64MiB";
    benchmark::RegisterBenchmark(name.c_str(), benchSum, type, true)->UseRealTime();
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
