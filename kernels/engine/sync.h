// How the engine's two instances order memory between ranks: the loads and
// stores of FIFO counters, the polite pause of a spin loop, and a clock for
// deadlines. The only place in kernels/engine/ where the CPU and the GPU
// differ in how, never in what.
//
// The protocol needs three things of a counter word that another rank reads:
//
//   loadAcquire     what the peer wrote before its publish is visible after it
//   storePublish    what this side wrote before is visible to whoever
//                   acquires the new value
//   storeAfterReads what this side read before is read (a slot handed back)
//   loadRelaxed /   the rank's own copies, and the byte counts beside the
//   storeRelaxed    counter, which the publish orders
//
// On the GPU the peer may be another process on another GPU, or the CPU
// reading pinned memory, so every access is at system scope. A block's
// threads write a slot together and one thread publishes it: the publish is
// a system-scope fence after the block's barrier, then the store, which is
// how PTX makes the other threads' writes part of the release.
//
// On the CPU the publish is sequentially consistent, not just a release:
// the shm FIFOs let a waiter sleep on a futex, and the poster must read the
// waiter's "I may be asleep" word after its store (base/futex.h).
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

#if !defined(__CUDA_ARCH__)
#include <chrono>
#include <thread>
#endif

namespace braid::kernels::engine {

BRAID_HOST_DEVICE uint32_t loadAcquire(const uint32_t* word) {
#if defined(__CUDA_ARCH__)
  uint32_t v;
  asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(word) : "memory");
  return v;
#else
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
#endif
}

BRAID_HOST_DEVICE uint32_t loadRelaxed(const uint32_t* word) {
#if defined(__CUDA_ARCH__)
  uint32_t v;
  asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(v) : "l"(word) : "memory");
  return v;
#else
  return __atomic_load_n(word, __ATOMIC_RELAXED);
#endif
}

BRAID_HOST_DEVICE uint64_t loadRelaxed(const uint64_t* word) {
#if defined(__CUDA_ARCH__)
  uint64_t v;
  asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(word) : "memory");
  return v;
#else
  return __atomic_load_n(word, __ATOMIC_RELAXED);
#endif
}

BRAID_HOST_DEVICE void storeRelaxed(uint32_t* word, uint32_t value) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.relaxed.sys.u32 [%0], %1;" ::"l"(word), "r"(value) : "memory");
#else
  __atomic_store_n(word, value, __ATOMIC_RELAXED);
#endif
}

BRAID_HOST_DEVICE void storeRelaxed(uint64_t* word, uint64_t value) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(word), "l"(value) : "memory");
#else
  __atomic_store_n(word, value, __ATOMIC_RELAXED);
#endif
}

/// Two adjacent 8-byte words, 16-byte aligned, stored together: on the GPU one 16-byte store
/// (st.relaxed.sys.v2.u64), one transaction on the interconnect. The pair is not one atomic
/// access: PTX makes each 8-byte element of a vector access single-copy atomic, no more, and on
/// the CPU they are two relaxed 8-byte atomics (an x86 16-byte store is not atomic in general,
/// and the host compiler may split one). So a reader checks each word on its own (the one-shot
/// gives each its own flag: one_shot.h).
BRAID_HOST_DEVICE void storeRelaxedPair(uint64_t* words, uint64_t first, uint64_t second) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.relaxed.sys.v2.u64 [%0], {%1, %2};" ::"l"(words), "l"(first), "l"(second)
               : "memory");
#else
  __atomic_store_n(words, first, __ATOMIC_RELAXED);
  __atomic_store_n(words + 1, second, __ATOMIC_RELAXED);
#endif
}

/// Loads the two words storeRelaxedPair stores: one 16-byte load on the GPU, each word
/// single-copy atomic, the pair not.
BRAID_HOST_DEVICE void loadRelaxedPair(const uint64_t* words, uint64_t* first, uint64_t* second) {
#if defined(__CUDA_ARCH__)
  uint64_t a, b;
  asm volatile("ld.relaxed.sys.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(words) : "memory");
  *first = a;
  *second = b;
#else
  *first = __atomic_load_n(words, __ATOMIC_RELAXED);
  *second = __atomic_load_n(words + 1, __ATOMIC_RELAXED);
#endif
}

/// Publishes `value`: every write this side made before (on the GPU: every
/// write of the block, once it has passed a barrier) is visible to a reader
/// that acquires it. On the GPU a release (fence.acq_rel, cumulative over
/// what the barrier ordered before it), not the sequentially consistent
/// fence of __threadfence_system, which no reader here needs.
BRAID_HOST_DEVICE void storePublish(uint32_t* word, uint32_t value) {
#if defined(__CUDA_ARCH__)
  asm volatile("fence.acq_rel.sys;" ::: "memory");
  storeRelaxed(word, value);
#else
  __atomic_store_n(word, value, __ATOMIC_SEQ_CST);
#endif
}

/// Hands `value` to a peer once this side is done reading what the peer
/// wrote (a FIFO's head: the slots read may be written again). On the GPU no
/// fence: the block's barrier before it performed every read (bar.sync
/// completes the memory accesses requested before it), and nothing this side
/// wrote needs to be seen first. On the CPU as storePublish: a poster must
/// read the waiter's futex word after its store (base/futex.h).
BRAID_HOST_DEVICE void storeAfterReads(uint32_t* word, uint32_t value) {
#if defined(__CUDA_ARCH__)
  storeRelaxed(word, value);
#else
  __atomic_store_n(word, value, __ATOMIC_SEQ_CST);
#endif
}

/// Orders this thread's earlier loads and stores before its later ones for
/// every observer, other processes and GPUs included (with a team barrier
/// around it, the team's: PTX fences are cumulative).
BRAID_HOST_DEVICE void fenceSystem() {
#if defined(__CUDA_ARCH__)
  __threadfence_system();
#else
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/// Sets `*word` from 0 to 1; true for the one caller that did.
BRAID_HOST_DEVICE bool claimWord(uint32_t* word) {
#if defined(__CUDA_ARCH__)
  return atomicCAS_system(reinterpret_cast<unsigned int*>(word), 0u, 1u) == 0u;
#else
  uint32_t expected = 0;
  return __atomic_compare_exchange_n(word, &expected, 1u, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED);
#endif
}

/// Tells the processor this is a spin loop.
BRAID_HOST_DEVICE void spinPause() {
#if defined(__CUDA_ARCH__)
  // Nothing: one polling thread per block costs the SM little, and a sleep
  // here would add to every hand-off.
#elif defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

/// What a long wait does between polls once spinning has not helped: on the
/// GPU sleep a little longer (the SM has other warps); on the CPU give the
/// core away, since an emulated GPU's blocks are threads that may outnumber
/// the cores, and the peer being waited for may need this one.
BRAID_HOST_DEVICE void backOff() {
#if defined(__CUDA_ARCH__)
#if __CUDA_ARCH__ >= 700
  __nanosleep(1000);
#endif
#else
  std::this_thread::yield();
#endif
}

/// Nanoseconds on a clock that only moves forward (the GPU's global timer,
/// or the host's steady clock); only differences mean anything.
BRAID_HOST_DEVICE uint64_t clockNs() {
#if defined(__CUDA_ARCH__)
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
#endif
}

}  // namespace braid::kernels::engine
