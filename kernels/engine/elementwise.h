// The copy and reduce loops of the engine, over a team of threads (team.h),
// compiled for the GPU by nvcc and for the CPU by the host compiler (the
// emulated GPU runs them), so CPU tests run the traversal the GPU runs: the
// split into 16-byte packs and a scalar head and tail, the unrolling, the
// team's stride.
//
// Terms. A pack is 16 bytes of elements, moved with one vector load or
// store on the GPU. When every pointer of a call sits at the same offset
// within 16 bytes, a scalar head brings them to a pack boundary; each
// thread then takes kUnroll (four) packs of every source per turn,
// team.size() apart in pack order (so a warp's loads are contiguous),
// loading all of them before computing any (the loads overlap); the packs
// after the last whole turn go one a turn, and the elements after the last
// whole pack are the tail. Copies whose pointers sit at different offsets
// within 16 bytes move the widest words (8, 4 or 2 bytes) at which they
// agree (copyBytes); reductions at different offsets take the same
// unrolled turns with element loads (kElemTurn elements of every source per
// thread per turn, team.size() apart, loads before computes).
//
// Registers. The kernels' launch bounds (kEngineThreads threads, at least
// kEngineMinBlocksPerSm blocks a multiprocessor) leave each thread
// kEngineRegisters registers; a turn's loads take 16 of them per source,
// so that the loops run in that budget without spilling
// (scripts/lib/ptxas_check.py checks it on the code ptxas generates).
//
// Sources that a peer wrote (a FIFO slot) are read with loads that bypass
// the GPU's L1 (ld.global.cv): the slot's previous contents may still sit
// there, and L1 is not coherent with writes from other SMs or GPUs. The
// `Peer` bit mask says which sources those are.
//
// The arithmetic is the functors' (reduce_op.h), element by element, so the
// GPU computes exactly what the host loops compute; the one exception,
// sums of half and bfloat16 on Hopper, adds pairs with one instruction and
// gives the same bits (PairedSum).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/engine/loop_meter.h"
#include "kernels/host_device.h"
#include "kernels/reduce_op.h"

namespace braid::kernels::engine {

inline constexpr size_t kPackBytes = 16;

template <typename T>
struct alignas(kPackBytes) Pack {
  static constexpr unsigned kElems = kPackBytes / sizeof(T);
  T e[kElems];
};

/// Packs of every source a thread loads per turn before it computes any, whatever the type.
inline constexpr unsigned kUnroll = 4;

/// Elements of every source a thread loads per turn where the pointers disagree modulo 16: a
/// turn's worth of packs, but at most 16, since an element loaded alone takes a register of its
/// own however narrow it is (16 registers a source, as four packs take).
template <typename T>
inline constexpr unsigned kElemTurn = Pack<T>::kElems* kUnroll < 16 ? Pack<T>::kElems* kUnroll : 16;

template <typename T>
BRAID_HOST_DEVICE Pack<T> loadPack(const T* p, bool fromPeer) {
  Pack<T> v;
#if defined(__CUDA_ARCH__)
  const uint4* q = reinterpret_cast<const uint4*>(p);
  *reinterpret_cast<uint4*>(&v) = fromPeer ? __ldcv(q) : *q;
#else
  (void)fromPeer;
  memcpy(&v, p, sizeof v);
#endif
  return v;
}

template <typename T>
BRAID_HOST_DEVICE void storePack(T* p, const Pack<T>& v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(&v);
#else
  memcpy(p, &v, sizeof v);
#endif
}

template <typename T>
BRAID_HOST_DEVICE T loadElem(const T* p, bool fromPeer) {
#if defined(__CUDA_ARCH__)
  if (fromPeer) {
    // One element through the same uncached path as the packs, by its bits.
    T v;
    if constexpr (sizeof(T) == 1) {
      const unsigned char u = __ldcv(reinterpret_cast<const unsigned char*>(p));
      memcpy(&v, &u, 1);
    } else if constexpr (sizeof(T) == 2) {
      const unsigned short u = __ldcv(reinterpret_cast<const unsigned short*>(p));
      memcpy(&v, &u, 2);
    } else if constexpr (sizeof(T) == 4) {
      const unsigned int u = __ldcv(reinterpret_cast<const unsigned int*>(p));
      memcpy(&v, &u, 4);
    } else {
      static_assert(sizeof(T) == 8, "elements are 1, 2, 4 or 8 bytes");
      const unsigned long long u = __ldcv(reinterpret_cast<const unsigned long long*>(p));
      memcpy(&v, &u, 8);
    }
    return v;
  }
#else
  (void)fromPeer;
#endif
  return *p;
}

/// The element function of copies: transform moves their packs whole.
template <typename T>
struct CopyElem {
  BRAID_HOST_DEVICE T operator()(const T (&x)[1]) const { return x[0]; }
};

template <typename T, typename Fn>
inline constexpr bool kIsCopy = std::is_same<Fn, CopyElem<T>>::value;

/// Whether fn, over two sources, is a sum of 16-bit floats with nothing applied first: on a GPU
/// such packs are added two elements to an instruction (add.rn.f16x2 / bf16x2), which rounds
/// each sum once, as the widening path does (a sum of two 16-bit floats is exact in float, so
/// rounding it to 16 bits again is the correctly rounded 16-bit sum). Set below, by the
/// element functions.
template <typename T, typename Fn>
struct PairedSum {
  static constexpr bool kHas = false;
};

#if defined(__CUDA_ARCH__)
/// Two 16-bit sums per instruction over the packs a and b (PairedSum).
template <typename T>
__device__ Pack<T> addPairs(const Pack<T>& a, const Pack<T>& b) {
  Pack<T> out;
  const uint32_t* x = reinterpret_cast<const uint32_t*>(&a);
  const uint32_t* y = reinterpret_cast<const uint32_t*>(&b);
  uint32_t* z = reinterpret_cast<uint32_t*>(&out);
  for (unsigned i = 0; i < kPackBytes / 4; ++i) {
    if constexpr (std::is_same<T, Float16>::value) {
      asm("add.rn.f16x2 %0, %1, %2;" : "=r"(z[i]) : "r"(x[i]), "r"(y[i]));
    } else {
      asm("add.rn.bf16x2 %0, %1, %2;" : "=r"(z[i]) : "r"(x[i]), "r"(y[i]));
    }
  }
  return out;
}
#endif

/// The pointers of one loop: kDsts outputs, kSrcs inputs.
template <typename T, int kDsts, int kSrcs>
struct Operands {
  T* dst[kDsts];
  const T* src[kSrcs];
};

template <typename T, int kDsts, int kSrcs>
BRAID_HOST_DEVICE uintptr_t packPhase(const Operands<T, kDsts, kSrcs>& o, bool* same) {
  const uintptr_t phase = reinterpret_cast<uintptr_t>(o.dst[0]) % kPackBytes;
  *same = phase % sizeof(T) == 0;
  for (int d = 0; d < kDsts; ++d) {
    *same = *same && reinterpret_cast<uintptr_t>(o.dst[d]) % kPackBytes == phase;
  }
  for (int s = 0; s < kSrcs; ++s) {
    *same = *same && reinterpret_cast<uintptr_t>(o.src[s]) % kPackBytes == phase;
  }
  return phase;
}

/// How many of indices [0, n) a thread of rank `rank` takes, striding by `size` from its rank.
BRAID_HOST_DEVICE size_t stridedShare(size_t n, unsigned rank, unsigned size) {
  return n > rank ? (n - rank - 1) / size + 1 : 0;
}

/// o with every pointer moved on by `by` elements.
template <typename T, int kDsts, int kSrcs>
BRAID_HOST_DEVICE Operands<T, kDsts, kSrcs> operandsAt(const Operands<T, kDsts, kSrcs>& o,
                                                       size_t by) {
  Operands<T, kDsts, kSrcs> at;
  for (int d = 0; d < kDsts; ++d) at.dst[d] = o.dst[d] + by;
  for (int s = 0; s < kSrcs; ++s) at.src[s] = o.src[s] + by;
  return at;
}

/// The pack one turn computes from the packs x of every source.
template <typename T, int kSrcs, typename Fn>
BRAID_HOST_DEVICE Pack<T> computePack(const Pack<T> (&x)[kSrcs], const Fn& fn) {
  if constexpr (kIsCopy<T, Fn>) {
    return x[0];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  } else if constexpr (PairedSum<T, Fn>::kHas) {
    return addPairs(x[0], x[1]);
#endif
  } else {
    Pack<T> out;
    BRAID_UNROLL
    for (unsigned e = 0; e < Pack<T>::kElems; ++e) {
      T y[kSrcs];
      BRAID_UNROLL
      for (int s = 0; s < kSrcs; ++s) y[s] = x[s].e[e];
      out.e[e] = fn(y);
    }
    return out;
  }
}

/// One turn over packs: packs 0, step, ... (kTurn of them) from o's pointers, of every source
/// loaded, then computed and stored. Pack q of a pointer is its elements q * kElems ..
/// q * kElems + kElems - 1.
template <unsigned kTurn, unsigned kPeer, typename T, int kDsts, int kSrcs, typename Fn>
BRAID_HOST_DEVICE void packTurn(const Operands<T, kDsts, kSrcs>& o, size_t step, const Fn& fn) {
  constexpr unsigned kElems = Pack<T>::kElems;
  Pack<T> in[kTurn][kSrcs];
  BRAID_UNROLL
  for (unsigned u = 0; u < kTurn; ++u) {
    BRAID_UNROLL
    for (int s = 0; s < kSrcs; ++s) {
      in[u][s] = loadPack(o.src[s] + u * step * kElems, (kPeer >> s) & 1u);
    }
  }
  BRAID_UNROLL
  for (unsigned u = 0; u < kTurn; ++u) {
    const Pack<T> out = computePack<T, kSrcs>(in[u], fn);
    BRAID_UNROLL
    for (int d = 0; d < kDsts; ++d) storePack(o.dst[d] + u * step * kElems, out);
  }
}

/// One turn over elements: elements i, i + step, ... (kTurn of them) of every source loaded,
/// then computed and stored.
template <unsigned kTurn, unsigned kPeer, typename T, int kDsts, int kSrcs, typename Fn>
BRAID_HOST_DEVICE void elementTurn(const Operands<T, kDsts, kSrcs>& o, size_t i, size_t step,
                                   const Fn& fn) {
  T in[kTurn][kSrcs];
  BRAID_UNROLL
  for (unsigned u = 0; u < kTurn; ++u) {
    BRAID_UNROLL
    for (int s = 0; s < kSrcs; ++s) in[u][s] = loadElem(o.src[s] + i + u * step, (kPeer >> s) & 1u);
  }
  BRAID_UNROLL
  for (unsigned u = 0; u < kTurn; ++u) {
    const T y = fn(in[u]);
    BRAID_UNROLL
    for (int d = 0; d < kDsts; ++d) o.dst[d][i + u * step] = y;
  }
}

/// The team's packs 0 .. packs - 1 of o, a thread's packs team.size() apart from its rank:
/// whole turns of kUnroll packs, then the rest one a turn.
template <unsigned kPeer, typename T, int kDsts, int kSrcs, typename Team, typename Fn>
BRAID_HOST_DEVICE void transformPacks(const Team& team, const Operands<T, kDsts, kSrcs>& o,
                                      size_t packs, const Fn& fn) {
  constexpr unsigned kElems = Pack<T>::kElems;
  const size_t step = team.size();
  const size_t mine = stridedShare(packs, team.rank(), team.size());  // this thread's packs
  Operands<T, kDsts, kSrcs> at = operandsAt(o, team.rank() * kElems);
  for (size_t turns = mine / kUnroll; turns > 0; --turns) {
    packTurn<kUnroll, kPeer>(at, step, fn);
    at = operandsAt(at, kUnroll * step * kElems);
  }
  for (size_t left = mine % kUnroll; left > 0; --left) {
    packTurn<1, kPeer>(at, step, fn);
    at = operandsAt(at, step * kElems);
  }
}

/// The team's elements 0 .. n - 1 of o, a thread's elements team.size() apart from its rank:
/// whole turns of kTurn elements (1: none), then the rest one a turn.
template <unsigned kTurn, unsigned kPeer, typename T, int kDsts, int kSrcs, typename Team,
          typename Fn>
BRAID_HOST_DEVICE void transformElements(const Team& team, const Operands<T, kDsts, kSrcs>& o,
                                         size_t n, const Fn& fn) {
  const size_t step = team.size();
  size_t i = team.rank();
  if constexpr (kTurn > 1) {
    for (; i + (kTurn - 1) * step < n; i += kTurn * step) elementTurn<kTurn, kPeer>(o, i, step, fn);
  }
  for (; i < n; i += step) elementTurn<1, kPeer>(o, i, step, fn);
}

/// dst[d][i] = fn(src[0][i], ...) for i < n, over the team. `fn` takes
/// kSrcs elements and returns one; every destination gets it. Destinations
/// may alias sources: each element is read before it is written, and a
/// thread writes only the elements it read.
template <unsigned kPeer, typename T, int kDsts, int kSrcs, typename Team, typename Fn>
BRAID_HOST_DEVICE void transform(const Team& team, Operands<T, kDsts, kSrcs> o, size_t n,
                                 const Fn& fn) {
  constexpr unsigned kElems = Pack<T>::kElems;
  bool packable = false;
  const uintptr_t phase = packPhase(o, &packable);
  if (!packable) {
    transformElements<kElemTurn<T>, kPeer>(team, o, n, fn);
#if !defined(__CUDA_ARCH__)
    noteLoopBytes(0, stridedShare(n, team.rank(), team.size()) * sizeof(T));
#endif
    return;
  }
  size_t first = phase == 0 ? 0 : (kPackBytes - phase) / sizeof(T);  // elements before the packs
  if (first > n) first = n;
  const size_t packs = (n - first) / kElems;
  const size_t tail = first + packs * kElems;
  transformElements<1, kPeer>(team, o, first, fn);
  transformPacks<kPeer>(team, operandsAt(o, first), packs, fn);
  transformElements<1, kPeer>(team, operandsAt(o, tail), n - tail, fn);
#if !defined(__CUDA_ARCH__)
  const size_t scalars = stridedShare(first, team.rank(), team.size()) +
                         stridedShare(n - tail, team.rank(), team.size());
  noteLoopBytes(stridedShare(packs, team.rank(), team.size()) * kPackBytes, scalars * sizeof(T));
#endif
}

/// transform of a few elements at the edge of a copy (fewer than a word), one a turn.
template <unsigned kPeer, typename T, int kDsts, int kSrcs, typename Team, typename Fn>
BRAID_HOST_DEVICE void transformFew(const Team& team, const Operands<T, kDsts, kSrcs>& o, size_t n,
                                    const Fn& fn) {
  transformElements<1, kPeer>(team, o, n, fn);
#if !defined(__CUDA_ARCH__)
  noteLoopBytes(0, stridedShare(n, team.rank(), team.size()) * sizeof(T));
#endif
}

/// transform in a function of its own on the GPU, as the copies are (copyBytesLoop): the
/// reductions' loops, one per (type, element function, operands), which ptxas gives registers
/// apart from the interpreter that calls them, and which scripts/lib/ptxas_check.py finds by
/// name.
template <unsigned kPeer, typename T, int kDsts, int kSrcs, typename Team, typename Fn>
BRAID_HOST_DEVICE_NOINLINE void transformLoop(const Team& team, Operands<T, kDsts, kSrcs> o,
                                              size_t n, Fn fn) {
  transform<kPeer>(team, o, n, fn);
}

// The element functions of the loops below (CopyElem is above transform, which knows it).
template <typename T, typename Pre, typename F>
struct ReduceElem {  ///< op(recv, pre(in))
  Pre pre;
  F f;
  BRAID_HOST_DEVICE T operator()(const T (&x)[2]) const { return f(x[0], pre(x[1])); }
};
template <typename T, typename F>
struct CombineElem {  ///< op(a, b): both loaded already
  F f;
  BRAID_HOST_DEVICE T operator()(const T (&x)[2]) const { return f(x[0], x[1]); }
};

template <typename T>
inline constexpr bool kIsHalfWidth =
    std::is_same<T, Float16>::value || std::is_same<T, Bfloat16>::value;
template <typename T, typename Pre>
struct PairedSum<T, ReduceElem<T, Pre, FuncSum<T>>> {
  static constexpr bool kHas = kIsHalfWidth<T> && Pre::kIdentity;
};
template <typename T>
struct PairedSum<T, CombineElem<T, FuncSum<T>>> {
  static constexpr bool kHas = kIsHalfWidth<T>;
};
template <typename T, typename U>
struct MapElem {  ///< u(x): a pre or a post
  U u;
  BRAID_HOST_DEVICE T operator()(const T (&x)[1]) const { return u(x[0]); }
};

/// Copies `bytes` from o.src[0] to every o.dst as words of W, whose pointers agree modulo
/// sizeof(W): the bytes before the first word boundary and after the last whole word one by
/// one, the words between as transform moves them (in packs where the pointers agree modulo
/// 16 as well).
template <typename W, unsigned kPeer, int kDsts, typename Team>
BRAID_HOST_DEVICE void copyAsWords(const Team& team, Operands<uint8_t, kDsts, 1> o, size_t bytes) {
  const size_t misfit = reinterpret_cast<uintptr_t>(o.src[0]) % sizeof(W);
  size_t head = misfit == 0 ? 0 : sizeof(W) - misfit;
  if (head > bytes) head = bytes;
  const size_t words = (bytes - head) / sizeof(W);
  const size_t body = words * sizeof(W);
  Operands<W, kDsts, 1> w;
  Operands<uint8_t, kDsts, 1> tail;
  for (int d = 0; d < kDsts; ++d) {
    w.dst[d] = reinterpret_cast<W*>(o.dst[d] + head);
    tail.dst[d] = o.dst[d] + head + body;
  }
  w.src[0] = reinterpret_cast<const W*>(o.src[0] + head);
  tail.src[0] = o.src[0] + head + body;
  transformFew<kPeer>(team, o, head, CopyElem<uint8_t>{});
  transform<kPeer>(team, w, words, CopyElem<W>{});
  transformFew<kPeer>(team, tail, bytes - head - body, CopyElem<uint8_t>{});
}

/// Copies `bytes` from o.src[0] to every o.dst in the widest words their addresses allow:
/// 16-byte packs where all agree modulo 16, else 8-, 4- or 2-byte words, so that a slice that
/// starts mid-pack in the user's buffer but at a slot's start in a FIFO still moves words,
/// not bytes.
template <unsigned kPeer, int kDsts, typename Team>
BRAID_HOST_DEVICE void copyBytes(const Team& team, Operands<uint8_t, kDsts, 1> o, size_t bytes) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(o.src[0]);
  uintptr_t spread = 0;  // a bit set wherever two addresses differ below it
  for (int d = 0; d < kDsts; ++d) spread |= reinterpret_cast<uintptr_t>(o.dst[d]) - base;
  if (spread % 8 == 0) {
    // Also the 16-byte case: transform finds the packs once the words are aligned.
    copyAsWords<uint64_t, kPeer>(team, o, bytes);
  } else if (spread % 4 == 0) {
    copyAsWords<uint32_t, kPeer>(team, o, bytes);
  } else if (spread % 2 == 0) {
    copyAsWords<uint16_t, kPeer>(team, o, bytes);
  } else {
    transform<kPeer>(team, o, bytes, CopyElem<uint8_t>{});
  }
}

/// dst = src over `bytes` (src local, or from a peer with kPeer = 1): one
/// function per team for every datatype, since copies do not depend on it.
template <unsigned kPeer, typename Team>
BRAID_HOST_DEVICE_NOINLINE void copyBytesLoop(const Team& team, uint8_t* dst, const uint8_t* src,
                                              size_t bytes) {
  copyBytes<kPeer>(team, Operands<uint8_t, 1, 1>{{dst}, {src}}, bytes);
}

/// dst1 = dst2 = src over `bytes`, src from a peer.
template <typename Team>
BRAID_HOST_DEVICE_NOINLINE void copyPeerBytesTwiceLoop(const Team& team, uint8_t* dst1,
                                                       uint8_t* dst2, const uint8_t* src,
                                                       size_t bytes) {
  copyBytes<1>(team, Operands<uint8_t, 2, 1>{{dst1, dst2}, {src}}, bytes);
}

/// The engine's loops for one (type, pre, op, post) on one team: what
/// slice_ops.h calls. `recv` is always a FIFO slot a peer wrote; `in` the
/// rank's own data.
template <typename T, typename Pre, typename F, typename Post, typename Team>
struct TeamLoops {
  const Team& team;
  const OpArgs args;  ///< a copy: a reference would keep the caller's copy in local memory

  /// dst = pre(in)
  BRAID_HOST_DEVICE void load(void* dst, const void* in, size_t n) const {
    if constexpr (Pre::kIdentity) {
      copy(dst, in, n * sizeof(T));
    } else {
      transformLoop<0>(team, Operands<T, 1, 1>{{t(dst)}, {t(in)}}, n, MapElem<T, Pre>{Pre(args)});
    }
  }
  /// dst = src (src local)
  BRAID_HOST_DEVICE void copy(void* dst, const void* src, size_t bytes) const {
    if (dst != src) copyBytesLoop<0>(team, b(dst), b(src), bytes);
  }
  /// dst = recv (recv from a peer)
  BRAID_HOST_DEVICE void copyPeer(void* dst, const void* recv, size_t bytes) const {
    copyBytesLoop<1>(team, b(dst), b(recv), bytes);
  }
  /// dst1 = dst2 = recv (recv from a peer)
  BRAID_HOST_DEVICE void copyPeerTwice(void* dst1, void* dst2, const void* recv,
                                       size_t bytes) const {
    copyPeerBytesTwiceLoop(team, b(dst1), b(dst2), b(recv), bytes);
  }
  /// dst = op(recv, pre(in))
  BRAID_HOST_DEVICE void reduce(void* dst, const void* recv, const void* in, size_t n) const {
    transformLoop<1>(team, Operands<T, 1, 2>{{t(dst)}, {t(recv), t(in)}}, n,
                     ReduceElem<T, Pre, F>{Pre(args), F()});
  }
  /// dst1 = dst2 = op(recv, pre(in))
  BRAID_HOST_DEVICE void reduce2(void* dst1, void* dst2, const void* recv, const void* in,
                                 size_t n) const {
    transformLoop<1>(team, Operands<T, 2, 2>{{t(dst1), t(dst2)}, {t(recv), t(in)}}, n,
                     ReduceElem<T, Pre, F>{Pre(args), F()});
  }
  /// dst = op(recv, local), local already loaded
  BRAID_HOST_DEVICE void combine(void* dst, const void* recv, const void* local, size_t n) const {
    transformLoop<1>(team, Operands<T, 1, 2>{{t(dst)}, {t(recv), t(local)}}, n,
                     CombineElem<T, F>{F()});
  }
  /// buf = post(buf)
  BRAID_HOST_DEVICE void finish(void* buf, size_t n) const {
    if constexpr (!Post::kIdentity) {
      transformLoop<0>(team, Operands<T, 1, 1>{{t(buf)}, {t(buf)}}, n,
                       MapElem<T, Post>{Post(args)});
    }
  }

 private:
  BRAID_HOST_DEVICE static T* t(void* p) { return static_cast<T*>(p); }
  BRAID_HOST_DEVICE static const T* t(const void* p) { return static_cast<const T*>(p); }
  BRAID_HOST_DEVICE static uint8_t* b(void* p) { return static_cast<uint8_t*>(p); }
  BRAID_HOST_DEVICE static const uint8_t* b(const void* p) {
    return static_cast<const uint8_t*>(p);
  }
};

/// The loops of a call that only moves data (all-gather, broadcast, sends
/// and receives): copies of whole elements, whatever their type, so every
/// kernel runs such calls. The executor marks a call copy-only when its
/// collective does not reduce, so the reducing loops are never called.
template <typename Team>
struct CopyLoops {
  const Team& team;
  size_t elemBytes;

  BRAID_HOST_DEVICE void load(void* dst, const void* in, size_t n) const {
    copy(dst, in, n * elemBytes);
  }
  BRAID_HOST_DEVICE void copy(void* dst, const void* src, size_t bytes) const {
    if (dst != src) {
      copyBytesLoop<0>(team, static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes);
    }
  }
  BRAID_HOST_DEVICE void copyPeer(void* dst, const void* recv, size_t bytes) const {
    copyBytesLoop<1>(team, static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(recv), bytes);
  }
  BRAID_HOST_DEVICE void copyPeerTwice(void* dst1, void* dst2, const void* recv,
                                       size_t bytes) const {
    copyPeerBytesTwiceLoop(team, static_cast<uint8_t*>(dst1), static_cast<uint8_t*>(dst2),
                           static_cast<const uint8_t*>(recv), bytes);
  }
  BRAID_HOST_DEVICE void reduce(void*, const void*, const void*, size_t) const {}
  BRAID_HOST_DEVICE void reduce2(void*, void*, const void*, const void*, size_t) const {}
  BRAID_HOST_DEVICE void combine(void*, const void*, const void*, size_t) const {}
  BRAID_HOST_DEVICE void finish(void*, size_t) const {}
};

}  // namespace braid::kernels::engine
