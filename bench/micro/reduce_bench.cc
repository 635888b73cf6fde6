// braid-reduce-bench: how close the host reduction loops come to memory
// bandwidth, per datatype and per build of the loops (portable, AVX2,
// AVX2+F16C, AVX-512: kernels/host_reduce.h's HostIsa, each where the CPU
// runs it), next to memcpy and copyBytes, all in one binary so the numbers
// compare.
//
// Two sizes: 64 MiB arrays, which come from memory, and 256 KiB arrays (three
// of them fit a 1 MiB L2), where the loops' arithmetic and conversions show
// instead of the memory. A reduce reads two arrays and writes a third:
// 3 x size bytes counted; a copy 2 x size. Every row reports bytes/s, and the
// `x_memcpy` counter divides it by memcpy's bytes/s at the same size,
// measured once before the first benchmark: 1.0 means the loop runs at
// memcpy speed. The rows to compare across types are bytes/s, not elements/s:
// "as fast per byte as float32" is the goal of the narrow types.
//
// Times are the benchmark thread's CPU time, not wall time: on a small VM
// shared with builds the thread is descheduled for long stretches, which wall
// time would count against whichever loop happened to run then. Time spent
// waiting for memory is CPU time, so the memory-bound rows still measure
// the memory.
//
//   <build>/bin/braid-reduce-bench [--benchmark_filter=sum/bfloat16] [--benchmark_min_time=1]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "braid/types.h"
#include "kernels/float_types.h"
#include "kernels/host_reduce.h"

namespace {

using braid::DataType;
using braid::RedOp;
namespace kernels = braid::kernels;
using kernels::HostIsa;

constexpr size_t kMemBytes = size_t(64) << 20;
constexpr size_t kCacheBytes = size_t(256) << 10;

/// Three 64 MiB arrays, touched once so that page faults stay out of the timings.
struct Arrays {
  std::vector<uint64_t> a, b, c;
  Arrays() : a(kMemBytes / 8, 1), b(kMemBytes / 8, 1), c(kMemBytes / 8, 1) {}
};

Arrays& arrays() {
  static Arrays arr;
  return arr;
}

std::string sizeName(size_t bytes) {
  return bytes >= (size_t(1) << 20) ? std::to_string(bytes >> 20) + "MiB"
                                    : std::to_string(bytes >> 10) + "KiB";
}

/// Fills `bytes` with the element value 1.5 (3 for integers), and `b` with
/// 0.75 so that a product stays put: no denormals, no NaNs, no overflow after
/// many in-place iterations, nothing that could take a slow path.
void fill(DataType type, void* p, size_t bytes, float value) {
  const size_t n = bytes / braid::dataTypeSize(type);
  auto fillAs = [&](auto v) {
    auto* t = static_cast<decltype(v)*>(p);
    std::fill(t, t + n, v);
  };
  switch (type) {
    case DataType::kFloat16:
      return fillAs(kernels::Float16::fromFloat(value));
    case DataType::kBfloat16:
      return fillAs(kernels::Bfloat16::fromFloat(value));
    case DataType::kFloat8e4m3:
      return fillAs(kernels::Float8e4m3::fromFloat(value));
    case DataType::kFloat8e5m2:
      return fillAs(kernels::Float8e5m2::fromFloat(value));
    case DataType::kFloat32:
      return fillAs(value);
    case DataType::kFloat64:
      return fillAs(static_cast<double>(value));
    default:
      memset(p, 3, bytes);
      return;
  }
}

/// The calling thread's CPU time in seconds.
double cpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// memcpy's bytes/s (read + written) at `bytes` over back-to-back copies,
/// after untimed ones: the yardstick of every x_memcpy counter of that size.
double memcpyRate(size_t bytes) {
  static std::map<size_t, double> rates;
  auto it = rates.find(bytes);
  if (it != rates.end()) return it->second;
  Arrays& arr = arrays();
  const int timed = static_cast<int>(std::max<size_t>(10, (size_t(640) << 20) / bytes));
  for (int i = 0; i < 2; ++i) memcpy(arr.c.data(), arr.a.data(), bytes);
  const double t0 = cpuSeconds();
  for (int i = 0; i < timed; ++i) {
    memcpy(arr.c.data(), arr.a.data(), bytes);
    benchmark::ClobberMemory();
  }
  const double rate = 2.0 * bytes * timed / (cpuSeconds() - t0);
  rates[bytes] = rate;
  return rate;
}

/// Times `body` the way Google Benchmark runs it and reports bytes/s and the
/// ratio to memcpy at `size`.
template <typename Body>
void measure(benchmark::State& state, size_t size, size_t bytesPerIteration, Body&& body) {
  const double reference = memcpyRate(size);
  const double t0 = cpuSeconds();
  for (auto _ : state) {
    body();
    benchmark::ClobberMemory();
  }
  const double elapsed = cpuSeconds() - t0;
  const double bytes = static_cast<double>(bytesPerIteration) * state.iterations();
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["x_memcpy"] = elapsed > 0 ? bytes / elapsed / reference : 0;
}

void benchMemcpy(benchmark::State& state, size_t size) {
  Arrays& arr = arrays();
  measure(state, size, 2 * size, [&] { memcpy(arr.c.data(), arr.a.data(), size); });
}

void benchCopyBytes(benchmark::State& state, size_t size) {
  Arrays& arr = arrays();
  measure(state, size, 2 * size, [&] { kernels::copyBytes(arr.c.data(), arr.a.data(), size); });
}

struct Case {
  DataType type;
  RedOp op;
  HostIsa isa;
  size_t size;
  bool inPlace;
};

/// c = op(a, b) (a = op(a, b) when in place) over `size`-byte arrays, with
/// avg's finish (a second pass over c) and premulsum's pre (by the scalar 0)
/// included.
void benchReduce(benchmark::State& state, Case k) {
  Arrays& arr = arrays();
  kernels::OpArgs args;
  args.nranks = 2;
  auto op = kernels::hostOp(k.type, k.op, args, k.isa);
  if (!op.ok()) {
    state.SkipWithError(op.status().message().c_str());
    return;
  }
  const kernels::HostOp& h = op.value();
  fill(k.type, arr.a.data(), k.size, 1.5f);
  fill(k.type, arr.b.data(), k.size, 0.75f);
  const size_t count = k.size / braid::dataTypeSize(k.type);
  void* dst = k.inPlace ? arr.a.data() : arr.c.data();
  measure(state, k.size, 3 * k.size, [&] {
    h.reduce(h.args, dst, arr.a.data(), arr.b.data(), count);
    h.finishOutput(dst, count);
  });
}

void add(const Case& k) {
  std::string name = std::string(k.inPlace ? "sum_in_place" : braid::redOpName(k.op)) + "/" +
                     braid::dataTypeName(k.type) + "/";
  if (k.isa != HostIsa::kBest) name += std::string(kernels::hostIsaName(k.isa)) + "/";
  name += sizeName(k.size);
  benchmark::RegisterBenchmark(name.c_str(), benchReduce, k);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  (void)arrays();  // allocate and fault in the arrays before anything is timed
  const size_t sizes[] = {kCacheBytes, kMemBytes};
  const DataType floats[] = {DataType::kFloat32, DataType::kFloat16, DataType::kBfloat16,
                             DataType::kFloat8e4m3, DataType::kFloat8e5m2};
  for (size_t size : sizes) {
    benchmark::RegisterBenchmark(("memcpy/" + sizeName(size)).c_str(), benchMemcpy, size);
    benchmark::RegisterBenchmark(("copyBytes/" + sizeName(size)).c_str(), benchCopyBytes, size);
    // Every type with the build the library picks (kBest).
    for (int t = 0; t < braid::kNumDataTypes; ++t) {
      add({static_cast<DataType>(t), RedOp::kSum, HostIsa::kBest, size, false});
    }
    // The float types on every build this CPU runs; max too, which fp8 does on its codes.
    for (HostIsa isa : kernels::kHostIsas) {
      if (isa == HostIsa::kBest || !kernels::hostIsaSupported(isa)) continue;
      for (RedOp op : {RedOp::kSum, RedOp::kMax}) {
        for (DataType type : floats) add({type, op, isa, size, false});
      }
    }
    // The other operators, briefly: the float types with the best build.
    for (RedOp op : {RedOp::kMax, RedOp::kMin, RedOp::kProd, RedOp::kAvg, RedOp::kPreMulSum}) {
      for (DataType type : floats) add({type, op, HostIsa::kBest, size, false});
    }
    for (DataType type : floats) add({type, RedOp::kSum, HostIsa::kBest, size, true});
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
