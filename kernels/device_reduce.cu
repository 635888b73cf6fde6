// The CUDA side of the reduction functors: one grid-stride kernel per
// (type, op), instantiated from a table like the host loops.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/device_reduce.h"
#include "kernels/dispatch.h"

namespace braid::kernels {
namespace {

template <typename T, typename Func>
__global__ void reduceKernel(T* dst, const T* a, const T* b, size_t count) {
  Func f;
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    dst[i] = f(a[i], b[i]);
  }
}

template <typename T, typename Func>
cudaError_t launch(void* dst, const void* a, const void* b, size_t count, cudaStream_t stream) {
  constexpr int kThreads = 512;
  size_t blocks = (count + kThreads - 1) / kThreads;
  if (blocks > 1024) blocks = 1024;
  if (blocks == 0) return cudaSuccess;
  reduceKernel<T, Func><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b), count);
  return cudaGetLastError();
}

using LaunchFn = cudaError_t (*)(void*, const void*, const void*, size_t, cudaStream_t);

LaunchFn lookup(DataType type, RedOp op) {
  return dispatchTypeAndOp(type, op, static_cast<LaunchFn>(nullptr), [](auto t, auto o) {
    using T = typename decltype(t)::Type;
    using F = typename decltype(o)::template Func<T>;
    return static_cast<LaunchFn>(launch<T, F>);
  });
}

}  // namespace

bool cudaDeviceAvailable() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

Status deviceReduce(DataType type, RedOp op, void* dst, const void* a, const void* b, size_t count,
                    void* stream) {
  LaunchFn fn = lookup(type, op);
  if (fn == nullptr) {
    return invalidUsage(std::string("device reduction of ") + dataTypeName(type) + " with op " +
                        redOpName(op) + " is not implemented yet in braid");
  }
  cudaError_t err = fn(dst, a, b, count, static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess) {
    return Status(ErrorCode::kCudaError,
                  std::string("reduction kernel launch failed: ") + cudaGetErrorString(err));
  }
  return Status::success();
}

}  // namespace braid::kernels
