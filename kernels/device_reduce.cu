// The CUDA side of the reduction functors: a grid-stride reduce kernel per
// (type, pre, op) and a map kernel per (type, pre or post), instantiated from
// the same dispatch table as the host loops. Per type that is seven kernels:
// four reduce (sum, prod, max, min), premulsum's reduce, its load, and avg's
// finish (avg reduces with sum's kernel).
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/device_reduce.h"
#include "kernels/dispatch.h"

namespace braid::kernels {
namespace {

template <typename T, typename Pre, typename F>
__global__ void reduceKernel(OpArgs args, T* dst, const T* a, const T* b, size_t count) {
  const Pre pre(args);
  const F f;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    dst[i] = f(a[i], pre(b[i]));
  }
}

template <typename T, typename U>
__global__ void mapKernel(OpArgs args, T* dst, const T* in, size_t count) {
  const U u(args);
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    dst[i] = u(in[i]);
  }
}

constexpr int kThreads = 512;

unsigned gridFor(size_t count) {
  size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks > 1024 ? 1024 : blocks);
}

template <typename T, typename Pre, typename F>
cudaError_t launchReduce(const OpArgs& args, void* dst, const void* a, const void* b, size_t count,
                         cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  reduceKernel<T, Pre, F><<<gridFor(count), kThreads, 0, stream>>>(
      args, static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b), count);
  return cudaGetLastError();
}

template <typename T, typename U>
cudaError_t launchMap(const OpArgs& args, void* dst, const void* in, size_t count,
                      cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  mapKernel<T, U><<<gridFor(count), kThreads, 0, stream>>>(args, static_cast<T*>(dst),
                                                           static_cast<const T*>(in), count);
  return cudaGetLastError();
}

using ReduceLaunch = cudaError_t (*)(const OpArgs&, void*, const void*, const void*, size_t,
                                     cudaStream_t);
using MapLaunch = cudaError_t (*)(const OpArgs&, void*, const void*, size_t, cudaStream_t);

/// The launchers of one (type, op); load and finish are nullptr for an
/// identity pre / post.
struct DeviceOp {
  ReduceLaunch reduce = nullptr;
  MapLaunch load = nullptr;
  MapLaunch finish = nullptr;
};

DeviceOp lookup(DataType type, RedOp op) {
  return dispatchTypeAndOp(type, op, DeviceOp{}, [](auto t, auto o) {
    using T = typename decltype(t)::Type;
    using O = decltype(o);
    using F = typename O::template Func<T>;
    using Pre = typename O::template Pre<T>;
    using Post = typename O::template Post<T>;
    DeviceOp d;
    d.reduce = &launchReduce<T, Pre, F>;
    if constexpr (!Pre::kIdentity) d.load = &launchMap<T, Pre>;
    if constexpr (!Post::kIdentity) d.finish = &launchMap<T, Post>;
    return d;
  });
}

Result<DeviceOp> find(DataType type, RedOp op, const OpArgs& args) {
  DeviceOp d = lookup(type, op);
  if (d.reduce == nullptr) {
    return invalidArgument("unknown datatype " + std::to_string(static_cast<int>(type)) +
                           " or reduction op " + std::to_string(static_cast<int>(op)));
  }
  if (op == RedOp::kAvg && args.nranks < 1) {
    return invalidArgument("avg needs a rank count of at least 1, got " +
                           std::to_string(args.nranks));
  }
  return d;
}

Status launched(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::success();
  return Status(ErrorCode::kCudaError, std::string(what) + " failed: " + cudaGetErrorString(err));
}

}  // namespace

bool cudaDeviceAvailable() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

Status deviceReduce(DataType type, RedOp op, const OpArgs& args, void* dst, const void* a,
                    const void* b, size_t count, void* stream) {
  BRAID_ASSIGN_OR_RETURN(DeviceOp d, find(type, op, args));
  return launched(d.reduce(args, dst, a, b, count, static_cast<cudaStream_t>(stream)),
                  "reduction kernel launch");
}

Status deviceLoad(DataType type, RedOp op, const OpArgs& args, void* dst, const void* in,
                  size_t count, void* stream) {
  BRAID_ASSIGN_OR_RETURN(DeviceOp d, find(type, op, args));
  auto s = static_cast<cudaStream_t>(stream);
  if (d.load != nullptr) return launched(d.load(args, dst, in, count, s), "load kernel launch");
  if (dst == in || count == 0) return Status::success();
  return launched(cudaMemcpyAsync(dst, in, count * dataTypeSize(type), cudaMemcpyDeviceToDevice, s),
                  "device-to-device copy");
}

Status deviceFinish(DataType type, RedOp op, const OpArgs& args, void* buf, size_t count,
                    void* stream) {
  BRAID_ASSIGN_OR_RETURN(DeviceOp d, find(type, op, args));
  if (d.finish == nullptr) return Status::success();
  return launched(d.finish(args, buf, buf, count, static_cast<cudaStream_t>(stream)),
                  "finish kernel launch");
}

}  // namespace braid::kernels
