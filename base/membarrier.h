// Asymmetric fences: a full barrier whose cost the side that runs rarely pays for both sides.
//
// Two threads that each store a word and then load the other's (a Dekker pair: a publisher
// and a reader about to sleep, a call and an abort) need a full barrier between the store and
// the load on both sides, or each may load the old value of the other's word. A locked
// instruction or mfence costs a few nanoseconds, more while a store to a line another core
// holds is in flight, and the frequent side pays it on every call. membarrier(2) moves that
// cost to the rare side: it returns only once every thread of this process (heavyPrivate) or
// of every process that registered (heavyGlobal) has passed a full barrier, so the frequent
// side needs only a compiler barrier between its store and its load:
//
//   frequent:  store mine;  lightFence();  load theirs
//   rare:      store theirs; heavy...();   load mine
//
// Either the frequent side's store was visible before the rare side's barrier returned, or
// the frequent side's load comes after that barrier, and sees the rare side's store.
// available() registers this process once; where the kernel lacks the expedited commands
// (before Linux 4.16, or a seccomp filter that refuses the call) it is false, and the frequent
// side keeps its full fence.
#pragma once

#include <atomic>

namespace braid::membarrier {

/// Whether this process is registered for the expedited barriers (registering it on the first
/// call).
bool available();

/// The frequent side's half; `asymmetric` is what available() said (kept by the caller, so
/// that a call reads no global): a compiler barrier, or else a full fence.
inline void lightFence(bool asymmetric) {
  if (asymmetric) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

/// The rare side's half for threads of this process: a full fence, and where available() a
/// barrier on every thread of it.
void heavyPrivate();
/// The same for every registered process of this machine (peers that share memory).
void heavyGlobal();

}  // namespace braid::membarrier
