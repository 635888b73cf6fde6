// The threads that run one channel together. On the GPU that is a block: one
// thread (the leader) waits for slots and publishes them, all of them move
// the slice's bytes. On the CPU it is the one thread that runs the channel.
// The interpreter and the loops are written against this interface, so the
// same source serves both.
//
//   rank(), size()  this thread's index in the team and the team's size
//   leader()        whether this thread waits and publishes
//   sync()          a barrier of the team
//   share(x)        the leader's value of x, on every thread (a barrier)
//   any(b)          whether b holds on some thread, on every thread (a barrier)
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace braid::kernels::engine {

/// The CPU's team: one thread. Everything is a compile-time constant, so
/// the loops compile to the plain loops the host compiler vectorizes.
struct SoloTeam {
  static constexpr unsigned rank() { return 0; }
  static constexpr unsigned size() { return 1; }
  static constexpr bool leader() { return true; }
  static void sync() {}
  template <typename T>
  static T share(T value) {
    return value;
  }
  static bool any(bool b) { return b; }
};

#if defined(__CUDACC__)
/// A CUDA block. share() goes through one word of shared memory per type
/// the block shares at a time, reused after the second barrier.
struct BlockTeam {
  __device__ __forceinline__ unsigned rank() const { return threadIdx.x; }
  __device__ __forceinline__ unsigned size() const { return blockDim.x; }
  __device__ __forceinline__ bool leader() const { return threadIdx.x == 0; }
  __device__ __forceinline__ void sync() const { __syncthreads(); }
  template <typename T>
  __device__ __forceinline__ T share(T value) const {
    static_assert(sizeof(T) <= 64, "share() passes small values");
    __shared__ alignas(16) unsigned char cell[64];
    if (leader()) *reinterpret_cast<T*>(cell) = value;
    __syncthreads();
    T out = *reinterpret_cast<T*>(cell);
    __syncthreads();
    return out;
  }
  __device__ __forceinline__ bool any(bool b) const { return __syncthreads_or(b) != 0; }
};
#endif

}  // namespace braid::kernels::engine
