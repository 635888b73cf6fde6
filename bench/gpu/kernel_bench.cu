// braid-kernel-bench: the engine's copy and reduce loops alone on a GPU, against the device's
// copy bandwidth, so scripts/gpu-check can say how close the loops come to what the memory
// allows. Bytes are counted alike for all: every byte read plus every byte written (a copy of
// S bytes moves 2S, a reduction of two S-byte inputs into a third 3S).
//
//   copy      cudaMemcpyAsync device to device: the bandwidth to compare with
//   loops     the engine's copy loop (kernels/engine/elementwise.h) over the whole GPU
//   reduce    the engine's reduce loop, out = op(a, b) with a read as a peer's slot is
//
// The loops run as the engine runs them, a block per part with the engine's 512 threads, with
// as many blocks as the GPU holds at once. Each figure is the median of the timed runs, by
// CUDA events, after warm-up runs. Usage: braid-kernel-bench [bytes per buffer, default 1G].
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/engine/elementwise.h"
#include "kernels/engine/launch.h"
#include "kernels/engine/team.h"

namespace {

namespace engine = braid::kernels::engine;
using braid::kernels::OpArgs;

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t e = (call);                                                          \
    if (e != cudaSuccess) {                                                          \
      fprintf(stderr, "braid-kernel-bench: %s: %s\n", #call, cudaGetErrorString(e)); \
      exit(2);                                                                       \
    }                                                                                \
  } while (0)

// Block b's part of n elements: whole packs, the last block the rest.
template <typename T>
__device__ void part(size_t n, size_t* lo, size_t* count) {
  constexpr size_t kPack = engine::Pack<T>::kElems;
  const size_t packs = (n + kPack - 1) / kPack;
  const size_t per = (packs + gridDim.x - 1) / gridDim.x * kPack;
  const size_t first = per * blockIdx.x;
  *lo = first < n ? first : n;
  *count = (*lo + per < n ? *lo + per : n) - *lo;
}

template <typename T>
__global__ void __launch_bounds__(engine::kEngineThreads) copyLoop(T* dst, const T* src, size_t n) {
  size_t lo = 0, count = 0;
  part<T>(n, &lo, &count);
  engine::BlockTeam team;
  engine::copyBytesLoop<0>(team, reinterpret_cast<uint8_t*>(dst + lo),
                           reinterpret_cast<const uint8_t*>(src + lo), count * sizeof(T));
}

template <typename T, typename O>
__global__ void __launch_bounds__(engine::kEngineThreads)
    reduceLoop(T* dst, const T* a, const T* b, size_t n, OpArgs args) {
  size_t lo = 0, count = 0;
  part<T>(n, &lo, &count);
  engine::BlockTeam team;
  using Loops = engine::TeamLoops<T, typename O::template Pre<T>, typename O::template Func<T>,
                                  typename O::template Post<T>, engine::BlockTeam>;
  Loops{team, args}.reduce(dst + lo, a + lo, b + lo, count);
}

template <typename Launch>
double medianMs(Launch launch, cudaStream_t s, int warmup, int reps) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmup; ++i) launch();
  CHECK(cudaStreamSynchronize(s));
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    CHECK(cudaEventRecord(start, s));
    launch();
    CHECK(cudaEventRecord(stop, s));
    CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms[ms.size() / 2];
}

double gbps(double bytes, double ms) { return bytes / (ms * 1e6); }

}  // namespace

int main(int argc, char** argv) {
  const size_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (size_t{1} << 30);
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  int perSm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &perSm, reduceLoop<float, braid::kernels::OpTag<braid::kernels::FuncSum>>,
      engine::kEngineThreads, 0));
  const int blocks = p.multiProcessorCount * std::max(perSm, 1);
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  char *a, *b, *c;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&c, bytes));
  // Not zeros: random-looking bytes (zeros can run faster than real data).
  std::vector<unsigned char> host(bytes);
  for (size_t i = 0; i < bytes; ++i) host[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
  CHECK(cudaMemcpy(a, host.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, host.data(), bytes, cudaMemcpyHostToDevice));
  const int warmup = 5, reps = 21;
  const unsigned threads = engine::kEngineThreads;

  printf("# braid-kernel-bench: %s, %d SMs, %d blocks of %u threads, buffers of %zu bytes\n",
         p.name, p.multiProcessorCount, blocks, threads, bytes);
  printf("# %-26s %10s %10s %8s\n", "what", "ms", "GB/s", "vs copy");
  const double copyMs = medianMs(
      [&] { CHECK(cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice, s)); }, s, warmup, reps);
  const double copyBw = gbps(2.0 * bytes, copyMs);
  printf("  %-26s %10.3f %10.1f %8.3f\n", "copy (cudaMemcpyAsync)", copyMs, copyBw, 1.0);
  const double loopMs = medianMs(
      [&] {
        copyLoop<float><<<blocks, threads, 0, s>>>(
            reinterpret_cast<float*>(c), reinterpret_cast<const float*>(a), bytes / sizeof(float));
      },
      s, warmup, reps);
  printf("  %-26s %10.3f %10.1f %8.3f\n", "engine copy loop", loopMs, gbps(2.0 * bytes, loopMs),
         gbps(2.0 * bytes, loopMs) / copyBw);
  auto reduce = [&](auto typeTag, const char* name) {
    using T = typename decltype(typeTag)::Type;
    const double ms = medianMs(
        [&] {
          reduceLoop<T, braid::kernels::OpTag<braid::kernels::FuncSum>><<<blocks, threads, 0, s>>>(
              reinterpret_cast<T*>(c), reinterpret_cast<const T*>(a), reinterpret_cast<const T*>(b),
              bytes / sizeof(T), OpArgs{});
        },
        s, warmup, reps);
    const double bw = gbps(3.0 * bytes, ms);
    printf("  %-26s %10.3f %10.1f %8.3f\n", name, ms, bw, bw / copyBw);
  };
  reduce(braid::kernels::TypeTag<float>{}, "engine reduce float32 sum");
  reduce(braid::kernels::TypeTag<braid::kernels::Bfloat16>{}, "engine reduce bf16 sum");
  reduce(braid::kernels::TypeTag<braid::kernels::Float16>{}, "engine reduce fp16 sum");
  reduce(braid::kernels::TypeTag<double>{}, "engine reduce float64 sum");
  reduce(braid::kernels::TypeTag<int8_t>{}, "engine reduce int8 sum");
  CHECK(cudaGetLastError());
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}
