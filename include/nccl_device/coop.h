/*
 * braid: the groups of threads that act together in the device API (NCCL's ncclCoop* types):
 * each says which thread of the group this is (thread_rank), how many there are (size,
 * num_threads), and waits for all of them (sync). Device code only.
 */
#ifndef BRAID_NCCL_DEVICE_COOP_H_
#define BRAID_NCCL_DEVICE_COOP_H_

#include "utility.h"

#if NCCL_CHECK_CUDACC
/** An aligned group of `nThreadsPow2` lanes of one warp (1, 2, 4, ... 32). */
template <int nThreadsPow2>
struct ncclCoopTile {
  static_assert(nThreadsPow2 >= 1 && nThreadsPow2 <= 32 && (nThreadsPow2 & (nThreadsPow2 - 1)) == 0,
                "a tile is a power of two of at most 32 lanes");
  NCCL_DEVICE_INLINE int thread_rank() const { return (threadIdx.x % 32) % nThreadsPow2; }
  NCCL_DEVICE_INLINE constexpr int size() const { return nThreadsPow2; }
  NCCL_DEVICE_INLINE constexpr int num_threads() const { return nThreadsPow2; }
  /** The lanes of this tile, as a mask of the warp. */
  NCCL_DEVICE_INLINE uint32_t laneMask() const {
    const uint32_t ones = nThreadsPow2 == 32 ? ~0u : ((1u << nThreadsPow2) - 1u);
    return ones << ((threadIdx.x % 32) & ~(nThreadsPow2 - 1));
  }
  NCCL_DEVICE_INLINE void sync() {
    if (nThreadsPow2 > 1) __syncwarp(laneMask());
  }
};

/** One thread on its own. */
typedef ncclCoopTile<1> ncclCoopThread;
/** A whole warp. */
typedef ncclCoopTile<32> ncclCoopWarp;

/** The lanes of `lmask` in this warp. */
struct ncclCoopLanes {
  uint32_t lmask;
  NCCL_DEVICE_INLINE constexpr ncclCoopLanes(uint32_t mask = ~0u) : lmask(mask) {}
  NCCL_DEVICE_INLINE int thread_rank() const {
    return __popc(lmask & ((1u << (threadIdx.x % 32)) - 1u));
  }
  NCCL_DEVICE_INLINE int size() const { return __popc(lmask); }
  NCCL_DEVICE_INLINE int num_threads() const { return __popc(lmask); }
  NCCL_DEVICE_INLINE void sync() { __syncwarp(lmask); }
};

/** Every thread of the block (CTA). */
struct ncclCoopCta {
  NCCL_DEVICE_INLINE int thread_rank() const { return threadIdx.x; }
  NCCL_DEVICE_INLINE int size() const { return blockDim.x; }
  NCCL_DEVICE_INLINE int num_threads() const { return blockDim.x; }
  NCCL_DEVICE_INLINE void sync() { __syncthreads(); }
};
#endif /* NCCL_CHECK_CUDACC */

#endif /* BRAID_NCCL_DEVICE_COOP_H_ */
