// The threads that run one channel together. On the GPU that is a block: one
// thread (the leader) waits for incoming slots and releases them, another
// (the sender) waits for room in outgoing ones and publishes them, so that
// the two waits overlap; all of them move the slice's bytes. On the CPU it is
// the one thread that runs the channel. The interpreter and the loops are
// written against this interface, so the same source serves both.
//
//   rank(), size()  this thread's index in the team and the team's size
//   leader()        whether this thread waits for and releases incoming slots
//   sender()        the rank of the thread that waits for and posts outgoing
//                   ones (warp 1's first thread; the leader in a team of one)
//   sync()          a barrier of the team
//   share(x)        the leader's value of x, on every thread (a barrier)
//   exchange(a, b)  the leader's a and the sender's b, on every thread (a barrier)
//   any(b)          whether b holds on some thread, on every thread (a barrier)
//   raiseStop(), stopRaised(), clearStop()
//                   a word of the team: a waiter that gives up raises it, so
//                   that the other waiter stops too instead of waiting on
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
  static constexpr unsigned sender() { return 0; }
  template <typename A, typename B>
  static void exchange(A&, B&) {}
  static bool any(bool b) { return b; }
};

/// The sender of a team of `size` threads: the first thread of the second warp, so that its
/// waits do not stall the leader's warp; the last thread of a smaller team.
BRAID_HOST_DEVICE unsigned senderOf(unsigned size) { return size > 32 ? 32 : size - 1; }

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
  __device__ __forceinline__ unsigned sender() const { return senderOf(blockDim.x); }
  template <typename A, typename B>
  __device__ __forceinline__ void exchange(A& a, B& b) const {
    static_assert(sizeof(A) <= 64 && sizeof(B) <= 64, "exchange() passes small values");
    __shared__ alignas(16) unsigned char cells[2][64];
    if (leader()) *reinterpret_cast<A*>(cells[0]) = a;
    if (threadIdx.x == sender()) *reinterpret_cast<B*>(cells[1]) = b;
    __syncthreads();
    a = *reinterpret_cast<A*>(cells[0]);
    b = *reinterpret_cast<B*>(cells[1]);
    __syncthreads();
  }
  __device__ __forceinline__ bool any(bool b) const { return __syncthreads_or(b) != 0; }
  __device__ __forceinline__ void raiseStop() const { *stopWord() = 1; }
  __device__ __forceinline__ bool stopRaised() const { return *stopWord() != 0; }
  __device__ __forceinline__ void clearStop() const { *stopWord() = 0; }

 private:
  __device__ __forceinline__ static volatile uint32_t* stopWord() {
    __shared__ uint32_t stop;
    return &stop;
  }
};
#endif

}  // namespace braid::kernels::engine
