/*
 * braid: the compiler plumbing of nccl_device.h.
 *
 * The device API's headers are read by three compilers: nvcc (device and host passes), a plain
 * C++ compiler (host code of a program, and braid's own library), and a C compiler (host code
 * that only creates and destroys device communicators). These macros say what each one sees:
 * device-only functions exist only under nvcc (NCCL_CHECK_CUDACC), and the functions marked
 * NCCL_HOST_DEVICE_INLINE compile for the host too, so a CPU program can call them on memory it
 * can read (braid's tests do, on the emulated GPU).
 */
#ifndef BRAID_NCCL_DEVICE_UTILITY_H_
#define BRAID_NCCL_DEVICE_UTILITY_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** 1 where CUDA source is being compiled (nvcc, clang -x cuda), else 0. */
#ifndef NCCL_CHECK_CUDACC
#if defined(__CUDACC__)
#define NCCL_CHECK_CUDACC 1
#else
#define NCCL_CHECK_CUDACC 0
#endif
#endif

#if NCCL_CHECK_CUDACC
#define NCCL_DEVICE_INLINE __device__ __forceinline__
#define NCCL_HOST_DEVICE_INLINE __host__ __device__ __forceinline__
#else
#define NCCL_DEVICE_INLINE inline
#define NCCL_HOST_DEVICE_INLINE inline
#endif

#ifdef __cplusplus
#define NCCL_EXTERN_C extern "C"
#else
#define NCCL_EXTERN_C
#endif

#if NCCL_CHECK_CUDACC
#include <cuda/atomic>
#endif

#ifdef __cplusplus
namespace nccl {
/** braid's helpers for the inline functions of these headers; not part of NCCL's API. */
namespace braid_detail {

/** Stores `value` at `cell` so that what this thread wrote (and saw) before is visible first. */
NCCL_HOST_DEVICE_INLINE void storeRelease(uint32_t* cell, uint32_t value) {
#if defined(__CUDA_ARCH__)
  cuda::atomic_ref<uint32_t, cuda::thread_scope_system>(*cell).store(value,
                                                                     cuda::memory_order_release);
#else
  __atomic_store_n(cell, value, __ATOMIC_RELEASE);
#endif
}

/** Loads `cell`; what its writer wrote before its release store is visible after. */
NCCL_HOST_DEVICE_INLINE uint32_t loadAcquire(uint32_t* cell) {
#if defined(__CUDA_ARCH__)
  return cuda::atomic_ref<uint32_t, cuda::thread_scope_system>(*cell).load(
      cuda::memory_order_acquire);
#else
  return __atomic_load_n(cell, __ATOMIC_ACQUIRE);
#endif
}

/** Whether counter `a` has not yet reached `b`, counting across the wrap of 32 bits. */
NCCL_HOST_DEVICE_INLINE bool rollingBefore(uint32_t a, uint32_t b) {
  return static_cast<int32_t>(a - b) < 0;
}

/** Stops the kernel (device) or the program (host): a path braid refused at creation. */
NCCL_HOST_DEVICE_INLINE void unsupported() {
#if defined(__CUDA_ARCH__)
  __trap();
#else
  __builtin_trap();
#endif
}

}  // namespace braid_detail
}  // namespace nccl
#endif /* __cplusplus */

#endif /* BRAID_NCCL_DEVICE_UTILITY_H_ */
