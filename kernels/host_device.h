// What kernels/ code needs to compile both as CUDA (host and device) and as
// plain C++ without CUDA headers: the function qualifier, bit casts between
// float and its bits, and float arithmetic with one rounding per operation.
//
// The arithmetic helpers exist for the device side: nvcc fuses a multiply
// feeding an add into one FMA by default, which rounds once instead of twice
// and would make GPU results differ from the host's. The _rn intrinsics are
// never fused. Host builds use plain operators (braid compiles kernels/ with
// -ffp-contract=off, so GCC does not fuse them either).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define BRAID_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define BRAID_HOST_DEVICE inline
#endif

// A function of its own on the GPU: the engine's per-(type, op) loops, so
// that the kernel is one interpreter calling them instead of one
// interpreter inlined per pair, which nvcc compiles for a very long time.
#if defined(__CUDACC__)
#define BRAID_HOST_DEVICE_NOINLINE __host__ __device__ __noinline__
#else
#define BRAID_HOST_DEVICE_NOINLINE inline
#endif

// A loop over a compile-time count that the device compiler must unroll: the engine's loops
// keep their loads in registers indexed by it, which a loop left rolled would index at run time
// (an array in local memory). The host compiler decides for itself.
#if defined(__CUDA_ARCH__)
#define BRAID_UNROLL _Pragma("unroll")
#else
#define BRAID_UNROLL
#endif

namespace braid::kernels {

BRAID_HOST_DEVICE uint32_t floatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

BRAID_HOST_DEVICE float floatFromBits(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

BRAID_HOST_DEVICE float addRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

BRAID_HOST_DEVICE double addRn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

BRAID_HOST_DEVICE float mulRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

BRAID_HOST_DEVICE double mulRn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

BRAID_HOST_DEVICE float divRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

BRAID_HOST_DEVICE double divRn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

}  // namespace braid::kernels
