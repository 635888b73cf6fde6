// Loops for bfloat16 on AVX-512 (F, BW, VL): 32 elements a step, widened
// into two registers of sixteen floats. The same conversions as
// host_narrow_simd.h's eight-lane ones, four times as wide, with AVX-512's
// mask registers in place of compare-and-blend sequences, and masked loads
// and stores for the last partial step, so that no element goes through a
// different code path than its neighbours. Internal to kernels/: included by
// host_reduce.cc (and its test), selected at run time on CPUs with AVX-512.
//
// The fp8 types have loops of their own (host_fp8_avx512.h), built on the
// step loops and float operations here. float16 has none: its AVX-512 build
// runs host_narrow_simd.h's, because on AMD Zen 4 (the one AVX-512 CPU
// measured) the 512-bit forms of vcvtph2ps / vcvtps2ph ran a float16 sum at
// 45 GB/s from L2 where the 256-bit ones ran it at 74 (docs/benchmarks.md,
// 2026-12-05).
//
// The results are the scalar functors' bit for bit, for the reasons
// host_narrow_simd.h gives. What is new here:
//
//   bfloat16 widens without a shuffle: a 32-bit lane holding elements 2k and
//   2k+1 is element 2k+1's float once its low half is cleared, and element
//   2k's once shifted left by 16. So one register holds the even elements and
//   the other the odd ones, and narrowing merges the two back word by word.
//   AVX512_BF16's vcvtne2ps2bf16 would narrow in one instruction, but it
//   treats subnormal floats as zero (checked on AMD Zen 4: every subnormal
//   input that should give a nonzero bfloat16 gave a signed zero), which
//   float_types.h does not, so the rounding stays in integer operations.
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/float_types.h"
#include "kernels/host_loops.h"
#include "kernels/reduce_op.h"

// GCC 12 warns that the undefined first operand inside its own
// _mm512_cvtph_ps, _mm512_extracti64x4_epi64 and the like is, or may be,
// used uninitialized (a false positive of its intrinsic headers, gone in GCC
// 13). Code that calls these helpers from elsewhere needs the same pragmas.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#define BRAID_INLINE_AVX512 \
  __attribute__((target("avx2,f16c,avx512f,avx512bw,avx512vl"), always_inline)) inline

namespace braid::kernels::loops {
namespace avx512 {

/// Elements per step.
constexpr size_t kStep = 32;

/// 32 elements as floats, in two registers. Which element sits in which lane
/// is the codec's business (kEvenOdd); every operation between a widening
/// and a narrowing is lane by lane, so the layout never shows.
struct Wide {
  __m512 a, b;
};

/// The mask of the first `n` (< 32) lanes of a step.
BRAID_INLINE_AVX512 __mmask32 firstLanes(size_t n) {
  return static_cast<__mmask32>((uint32_t{1} << n) - 1);
}

/// 32 elements of bfloat16 as one register of bits.
template <typename T>
struct Bits16 {
  using Bits = __m512i;
  static constexpr size_t kStep = avx512::kStep;
  BRAID_INLINE_AVX512 static __mmask32 firstLanes(size_t n) { return avx512::firstLanes(n); }
  BRAID_INLINE_AVX512 static Bits loadBits(const T* p) { return _mm512_loadu_si512(p); }
  BRAID_INLINE_AVX512 static Bits loadBits(const T* p, __mmask32 k) {
    return _mm512_maskz_loadu_epi16(k, p);
  }
  BRAID_INLINE_AVX512 static void storeBits(T* p, Bits b) { _mm512_storeu_si512(p, b); }
  BRAID_INLINE_AVX512 static void storeBits(T* p, Bits b, __mmask32 k) {
    _mm512_mask_storeu_epi16(p, k, b);
  }
};

template <typename T>
struct Codec;

/// bfloat16: a holds the even elements, b the odd ones (see the top).
template <>
struct Codec<Bfloat16> : Bits16<Bfloat16> {
  static constexpr bool kEvenOdd = true;
  BRAID_INLINE_AVX512 static Wide widen(Bits h) {
    return {_mm512_castsi512_ps(_mm512_slli_epi32(h, 16)),
            _mm512_castsi512_ps(_mm512_and_si512(h, _mm512_set1_epi32(-0x10000)))};
  }
  // narrowFromFloat for bfloat16 in the high half of each lane: round at bit
  // 16 to nearest even; a NaN keeps its sign and leading payload and gets
  // the quiet bit.
  BRAID_INLINE_AVX512 static __m512i roundHigh(__m512 v) {
    const __m512i u = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_or_epi32(rounded, nan, u, _mm512_set1_epi32(0x00400000));
  }
  BRAID_INLINE_AVX512 static Bits narrow(Wide v) {
    const __m512i even = _mm512_srli_epi32(roundHigh(v.a), 16);
    // The odd elements' words are the high halves as they stand.
    return _mm512_mask_blend_epi16(0xaaaaaaaau, even, roundHigh(v.b));
  }
};

/// The float operation inside each binary functor, on both registers.
template <typename F>
struct VecOp;
template <typename T>
struct VecOp<FuncSum<T>> {
  BRAID_INLINE_AVX512 static __m512 apply(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
};
template <typename T>
struct VecOp<FuncProd<T>> {
  BRAID_INLINE_AVX512 static __m512 apply(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }
};
template <typename T>
struct VecOp<FuncMax<T>> {
  // a < b ? b : a (ordered compare: a NaN operand keeps a)
  BRAID_INLINE_AVX512 static __m512 apply(__m512 a, __m512 b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), a, b);
  }
};
template <typename T>
struct VecOp<FuncMin<T>> {
  // b < a ? b : a
  BRAID_INLINE_AVX512 static __m512 apply(__m512 a, __m512 b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(b, a, _CMP_LT_OQ), a, b);
  }
};

template <typename F>
BRAID_INLINE_AVX512 Wide apply(Wide x, Wide y) {
  return {VecOp<F>::apply(x.a, y.a), VecOp<F>::apply(x.b, y.b)};
}

/// The float operation of each unary functor (pre and post), as
/// host_narrow_simd.h's VecUnary: premulsum's product rounds to T at once,
/// because the scalar functor's does.
template <typename U>
struct VecUnary;
template <typename T>
struct VecUnary<FuncIdentity<T>> {
  explicit VecUnary(const OpArgs&) {}
  BRAID_INLINE_AVX512 Wide apply(Wide x) const { return x; }
};
template <typename T>
struct VecUnary<FuncPreMul<T>> {
  float scalar;
  explicit VecUnary(const OpArgs& args) : scalar(FuncPreMul<T>(args).scalar.toFloat()) {}
  BRAID_INLINE_AVX512 Wide apply(Wide x) const {
    const __m512 s = _mm512_set1_ps(scalar);
    return Codec<T>::widen(Codec<T>::narrow({_mm512_mul_ps(s, x.a), _mm512_mul_ps(s, x.b)}));
  }
};
template <typename T>
struct VecUnary<FuncDiv<T>> {
  float nranks;
  explicit VecUnary(const OpArgs& args) : nranks(static_cast<float>(args.nranks)) {}
  BRAID_INLINE_AVX512 Wide apply(Wide x) const {
    const __m512 n = _mm512_set1_ps(nranks);
    return {_mm512_div_ps(x.a, n), _mm512_div_ps(x.b, n)};
  }
};

/// One step of a reduce, op(recv, pre(in)), on the bits of T.
template <typename T, typename Pre, typename F>
struct ReduceStep {
  using Bits = typename Codec<T>::Bits;
  VecUnary<Pre> pre;
  explicit ReduceStep(const OpArgs& args) : pre(args) {}
  BRAID_INLINE_AVX512 Bits operator()(Bits r, Bits x) const {
    using C = Codec<T>;
    return C::narrow(apply<F>(C::widen(r), pre.apply(C::widen(x))));
  }
};

/// One step of a load or finish, u(x), on the bits of T.
template <typename T, typename U>
struct MapStep {
  using Bits = typename Codec<T>::Bits;
  VecUnary<U> u;
  explicit MapStep(const OpArgs& args) : u(args) {}
  BRAID_INLINE_AVX512 Bits operator()(Bits x) const {
    using C = Codec<T>;
    return C::narrow(u.apply(C::widen(x)));
  }
};

}  // namespace avx512

// One build of the step loops: reduce, reduce2, load and finish over whole
// steps of Codec<T>::kStep elements, then one partial step that runs the same
// code on masked loads and stores, with the target attribute TARGET and the
// Codec, ReduceStep and MapStep of namespace NS (a macro for the reason
// host_loops.h's BRAID_HOST_LOOPS is one).
#define BRAID_STEP_LOOPS(Name, TARGET, NS)                                                        \
  struct Name {                                                                                   \
    template <typename T, typename Pre, typename F>                                               \
    TARGET static void reduce(const OpArgs& args, void* dst, const void* recv, const void* in,    \
                              size_t count) {                                                     \
      using C = NS::Codec<T>;                                                                     \
      auto* d = static_cast<T*>(dst);                                                             \
      const auto* r = static_cast<const T*>(recv);                                                \
      const auto* x = static_cast<const T*>(in);                                                  \
      const NS::ReduceStep<T, Pre, F> step(args);                                                 \
      size_t i = 0;                                                                               \
      for (; i + C::kStep <= count; i += C::kStep) {                                              \
        C::storeBits(d + i, step(C::loadBits(r + i), C::loadBits(x + i)));                        \
      }                                                                                           \
      if (i < count) {                                                                            \
        const auto k = C::firstLanes(count - i);                                                  \
        C::storeBits(d + i, step(C::loadBits(r + i, k), C::loadBits(x + i, k)), k);               \
      }                                                                                           \
    }                                                                                             \
    template <typename T, typename Pre, typename F>                                               \
    TARGET static void reduce2(const OpArgs& args, void* dst1, void* dst2, const void* recv,      \
                               const void* in, size_t count) {                                    \
      using C = NS::Codec<T>;                                                                     \
      auto* d1 = static_cast<T*>(dst1);                                                           \
      auto* d2 = static_cast<T*>(dst2);                                                           \
      const auto* r = static_cast<const T*>(recv);                                                \
      const auto* x = static_cast<const T*>(in);                                                  \
      const NS::ReduceStep<T, Pre, F> step(args);                                                 \
      size_t i = 0;                                                                               \
      for (; i + C::kStep <= count; i += C::kStep) {                                              \
        const auto v = step(C::loadBits(r + i), C::loadBits(x + i));                              \
        C::storeBits(d1 + i, v);                                                                  \
        C::storeBits(d2 + i, v);                                                                  \
      }                                                                                           \
      if (i < count) {                                                                            \
        const auto k = C::firstLanes(count - i);                                                  \
        const auto v = step(C::loadBits(r + i, k), C::loadBits(x + i, k));                        \
        C::storeBits(d1 + i, v, k);                                                               \
        C::storeBits(d2 + i, v, k);                                                               \
      }                                                                                           \
    }                                                                                             \
    template <typename T, typename Pre>                                                           \
    TARGET static void load(const OpArgs& args, void* dst, const void* in, size_t count) {        \
      map<T, Pre>(args, static_cast<T*>(dst), static_cast<const T*>(in), count);                  \
    }                                                                                             \
    template <typename T, typename Post>                                                          \
    TARGET static void finish(const OpArgs& args, void* buf, size_t count) {                      \
      map<T, Post>(args, static_cast<T*>(buf), static_cast<const T*>(buf), count);                \
    }                                                                                             \
                                                                                                  \
   private:                                                                                       \
    template <typename T, typename U>                                                             \
    TARGET static void map(const OpArgs& args, T* d, const T* x, size_t count) {                  \
      using C = NS::Codec<T>;                                                                     \
      const NS::MapStep<T, U> step(args);                                                         \
      size_t i = 0;                                                                               \
      for (; i + C::kStep <= count; i += C::kStep) C::storeBits(d + i, step(C::loadBits(x + i))); \
      if (i < count) {                                                                            \
        const auto k = C::firstLanes(count - i);                                                  \
        C::storeBits(d + i, step(C::loadBits(x + i, k)), k);                                      \
      }                                                                                           \
    }                                                                                             \
  }

/// The loops of bfloat16, 32 elements a step.
BRAID_STEP_LOOPS(NarrowAvx512Loops, BRAID_TARGET_AVX512, avx512);

}  // namespace braid::kernels::loops

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // defined(__x86_64__)
