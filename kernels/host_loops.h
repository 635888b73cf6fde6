// The host loops, as templates over (element type, pre, op, post) functors,
// and the builds of them per instruction set. Internal to kernels/: included
// by host_reduce.cc (the table), host_narrow_simd.h and host_narrow_avx512.h
// (the 16- and 8-bit float types with hand-written conversions).
//
// The bodies are forced inline into small wrappers that carry a target
// attribute, so one source yields a portable, an AVX2 and an AVX-512 build of
// every loop, chosen at run time (the library still runs on CPUs without AVX2).
// Per-function attributes, not `#pragma GCC target` over a file: inline
// functions instantiated under a file-wide pragma could be emitted with AVX2
// code and picked by the linker for callers that run anywhere.
//
// The loops are written so that GCC vectorizes them: one element at a time
// over contiguous ranges, branch-free functors (float_types.h). Aliasing (dst
// == recv or in) is legal because each element is read before it is written.
#pragma once

#include <cstddef>

#include "kernels/host_reduce.h"
#include "kernels/reduce_op.h"

#define BRAID_ALWAYS_INLINE __attribute__((always_inline)) inline

namespace braid::kernels::loops {

template <typename T, typename Pre, typename F>
BRAID_ALWAYS_INLINE void reduceBody(const OpArgs& args, void* dst, const void* recv, const void* in,
                                    size_t count) {
  T* d = static_cast<T*>(dst);
  const T* r = static_cast<const T*>(recv);
  const T* x = static_cast<const T*>(in);
  const Pre pre(args);
  const F f;
  for (size_t i = 0; i < count; ++i) d[i] = f(r[i], pre(x[i]));
}

template <typename T, typename Pre, typename F>
BRAID_ALWAYS_INLINE void reduce2Body(const OpArgs& args, void* dst1, void* dst2, const void* recv,
                                     const void* in, size_t count) {
  T* d1 = static_cast<T*>(dst1);
  T* d2 = static_cast<T*>(dst2);
  const T* r = static_cast<const T*>(recv);
  const T* x = static_cast<const T*>(in);
  const Pre pre(args);
  const F f;
  for (size_t i = 0; i < count; ++i) {
    const T v = f(r[i], pre(x[i]));
    // The narrow float types are stored through their bits: GCC does not
    // vectorize a struct value stored twice.
    if constexpr (kIsNarrowFloat<T>) {
      d1[i].bits = v.bits;
      d2[i].bits = v.bits;
    } else {
      d1[i] = v;
      d2[i] = v;
    }
  }
}

template <typename T, typename U>
BRAID_ALWAYS_INLINE void mapBody(const OpArgs& args, void* dst, const void* in, size_t count) {
  T* d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(in);
  const U u(args);
  for (size_t i = 0; i < count; ++i) d[i] = u(x[i]);
}

// One build of the loops: the bodies above in functions that carry the
// target attribute `TARGET` (nothing for the baseline). A macro because an
// attribute cannot be a template argument; every build has the same
// arithmetic per element, so the result does not depend on the build that ran.
#define BRAID_HOST_LOOPS(Name, TARGET)                                                         \
  struct Name {                                                                                \
    template <typename T, typename Pre, typename F>                                            \
    TARGET static void reduce(const OpArgs& args, void* dst, const void* recv, const void* in, \
                              size_t count) {                                                  \
      reduceBody<T, Pre, F>(args, dst, recv, in, count);                                       \
    }                                                                                          \
    template <typename T, typename Pre, typename F>                                            \
    TARGET static void reduce2(const OpArgs& args, void* dst1, void* dst2, const void* recv,   \
                               const void* in, size_t count) {                                 \
      reduce2Body<T, Pre, F>(args, dst1, dst2, recv, in, count);                               \
    }                                                                                          \
    template <typename T, typename Pre>                                                        \
    TARGET static void load(const OpArgs& args, void* dst, const void* in, size_t count) {     \
      mapBody<T, Pre>(args, dst, in, count);                                                   \
    }                                                                                          \
    template <typename T, typename Post>                                                       \
    TARGET static void finish(const OpArgs& args, void* buf, size_t count) {                   \
      mapBody<T, Post>(args, buf, buf, count);                                                 \
    }                                                                                          \
  }

/// The baseline build: whatever the compiler targets by default.
BRAID_HOST_LOOPS(PortableLoops, );

#if defined(__x86_64__)
#define BRAID_TARGET_AVX2 __attribute__((target("avx2")))
// AVX-512 F, BW and VL (with the AVX2 and F16C that every such CPU has): what
// the narrow float types' loops (host_narrow_avx512.h) use too.
#define BRAID_TARGET_AVX512 __attribute__((target("avx2,f16c,avx512f,avx512bw,avx512vl")))

/// 256-bit vectors.
BRAID_HOST_LOOPS(Avx2Loops, BRAID_TARGET_AVX2);
/// 512-bit vectors, for the types without hand-written AVX-512 loops.
BRAID_HOST_LOOPS(Avx512Loops, BRAID_TARGET_AVX512);
#endif

/// The HostOp of one (type, operator) from one build of the loops. `O` is a
/// dispatch.h OpTag; load and finish stay nullptr for identity pre / post.
template <typename Loops, typename T, typename O>
HostOp makeHostOp(const OpArgs& args) {
  using F = typename O::template Func<T>;
  using Pre = typename O::template Pre<T>;
  using Post = typename O::template Post<T>;
  HostOp op;
  op.args = args;
  op.reduce = &Loops::template reduce<T, Pre, F>;
  op.reduce2 = &Loops::template reduce2<T, Pre, F>;
  if constexpr (!Pre::kIdentity) op.load = &Loops::template load<T, Pre>;
  if constexpr (!Post::kIdentity) op.finish = &Loops::template finish<T, Post>;
  return op;
}

}  // namespace braid::kernels::loops
