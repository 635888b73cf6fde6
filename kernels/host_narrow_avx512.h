// Loops for bfloat16 and the fp8 types on AVX-512 (F, BW, VL): 32 elements a
// step, widened into two registers of sixteen floats. The same conversions as
// host_narrow_simd.h's eight-lane ones, four times as wide, with
// AVX-512's mask registers in place of compare-and-blend sequences, and
// masked loads and stores for the last partial step, so that no element
// goes through a different code path than its neighbours. Internal to
// kernels/: included by host_reduce.cc (and its test), selected at run time
// on CPUs with AVX-512.
//
// float16 has no loops here: its AVX-512 build runs host_narrow_simd.h's,
// because on AMD Zen 4 (the one AVX-512 CPU measured) the 512-bit forms of
// vcvtph2ps / vcvtps2ph ran a float16 sum at 45 GB/s from L2 where the
// 256-bit ones ran it at 74 (docs/benchmarks.md, 2026-12-05).
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
//
//   fp8 narrows 32 lanes of 16 bits in one register and packs to bytes with
//   vpmovwb, instead of two half-width packs.
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

/// The fp8 codes through float16, as host_narrow_simd.h's Fp8Codec (which
/// explains the arithmetic), 32 lanes of 16 bits at a time.
template <typename T>
struct Fp8Codec {
  static constexpr bool kEvenOdd = false;
  static constexpr bool kE4m3 = std::is_same<T, Float8e4m3>::value;
  static constexpr int kDrop = kE4m3 ? 7 : 8;               // float16 bits below the fp8 code
  static constexpr short kMaxFinite = kE4m3 ? 0x7e : 0x7b;  // fp8 magnitude code
  static constexpr float kScale = kE4m3 ? 256.0f : 1.0f;    // fp8 value / float16 value

  using Bits = __m256i;
  BRAID_INLINE_AVX512 static Bits loadBits(const T* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  BRAID_INLINE_AVX512 static Bits loadBits(const T* p, __mmask32 k) {
    return _mm256_maskz_loadu_epi8(k, p);
  }
  BRAID_INLINE_AVX512 static void storeBits(T* p, Bits b) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), b);
  }
  BRAID_INLINE_AVX512 static void storeBits(T* p, Bits b, __mmask32 k) {
    _mm256_mask_storeu_epi8(p, k, b);
  }

  BRAID_INLINE_AVX512 static Wide widen(Bits b) {
    const __m512i w = _mm512_cvtepu8_epi16(b);
    __m512i h;
    if constexpr (kE4m3) {
      const __m512i mag = _mm512_and_si512(w, _mm512_set1_epi16(0x7f));
      const __m512i sign = _mm512_slli_epi16(_mm512_and_si512(w, _mm512_set1_epi16(0x80)), 8);
      // S.1111.111 is NaN: float16's NaN 0x7f80 is 0x3f80 + 0x4000.
      const __mmask32 nan = _mm512_cmpeq_epi16_mask(mag, _mm512_set1_epi16(0x7f));
      h = _mm512_or_si512(_mm512_slli_epi16(mag, 7), sign);
      h = _mm512_mask_add_epi16(h, nan, h, _mm512_set1_epi16(0x4000));
    } else {
      h = _mm512_slli_epi16(w, 8);
    }
    Wide v = {_mm512_cvtph_ps(_mm512_castsi512_si256(h)),
              _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1))};
    if constexpr (kE4m3) {
      v.a = _mm512_mul_ps(v.a, _mm512_set1_ps(kScale));
      v.b = _mm512_mul_ps(v.b, _mm512_set1_ps(kScale));
    }
    return v;
  }

  /// v rounded to float16 toward zero, then to odd (host_narrow_simd.h's
  /// float16RoundToOdd), sixteen float16 results in a ymm.
  BRAID_INLINE_AVX512 static __m256i roundToOdd(__m512 v, __mmask16* inexact) {
    const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    *inexact = _mm512_cmp_ps_mask(_mm512_cvtph_ps(h), v, _CMP_NEQ_UQ);
    return h;
  }

  BRAID_INLINE_AVX512 static Bits narrow(Wide v) {
    if constexpr (kE4m3) {
      v.a = _mm512_mul_ps(v.a, _mm512_set1_ps(1.0f / kScale));
      v.b = _mm512_mul_ps(v.b, _mm512_set1_ps(1.0f / kScale));
    }
    __mmask16 inexactA, inexactB;
    const __m256i ha = roundToOdd(v.a, &inexactA);
    const __m256i hb = roundToOdd(v.b, &inexactB);
    const auto inexact = static_cast<__mmask32>(inexactA | (uint32_t{inexactB} << 16));
    __m512i h = _mm512_inserti64x4(_mm512_castsi256_si512(ha), hb, 1);
    h = _mm512_or_si512(h, _mm512_maskz_mov_epi16(inexact, _mm512_set1_epi16(1)));

    const __m512i sign = _mm512_srli_epi16(_mm512_and_si512(h, _mm512_set1_epi16(-0x8000)), 8);
    const __m512i m = _mm512_and_si512(h, _mm512_set1_epi16(0x7fff));
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi16(m, kDrop), _mm512_set1_epi16(1));
    const __m512i half = _mm512_set1_epi16((1 << (kDrop - 1)) - 1);
    __m512i code = _mm512_srli_epi16(_mm512_add_epi16(_mm512_add_epi16(m, half), lsb), kDrop);
    code = _mm512_min_epu16(code, _mm512_set1_epi16(kMaxFinite));  // saturate, infinity too
    // NaN: e4m3's one NaN; e5m2 keeps float16's top byte (quiet bit set by F16C).
    const __mmask32 nan = _mm512_cmpgt_epi16_mask(m, _mm512_set1_epi16(0x7c00));
    const __m512i nanCode = kE4m3 ? _mm512_set1_epi16(0x7f) : _mm512_srli_epi16(m, 8);
    code = _mm512_or_si512(_mm512_mask_mov_epi16(code, nan, nanCode), sign);
    return _mm512_cvtepi16_epi8(code);
  }
};

template <>
struct Codec<Float8e4m3> : Fp8Codec<Float8e4m3> {};
template <>
struct Codec<Float8e5m2> : Fp8Codec<Float8e5m2> {};

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

/// One step of a reduce: op(recv, pre(in)) as bits of T.
template <typename T, typename Pre, typename F>
BRAID_INLINE_AVX512 typename Codec<T>::Bits reduceStep(const VecUnary<Pre>& pre,
                                                       typename Codec<T>::Bits r,
                                                       typename Codec<T>::Bits x) {
  using C = Codec<T>;
  return C::narrow(apply<F>(C::widen(r), pre.apply(C::widen(x))));
}

}  // namespace avx512

/// The loops of the 16- and 8-bit float types, 32 elements a step; the last
/// partial step runs the same code on masked loads and stores.
struct NarrowAvx512Loops {
  template <typename T, typename Pre, typename F>
  BRAID_TARGET_AVX512 static void reduce(const OpArgs& args, void* dst, const void* recv,
                                         const void* in, size_t count) {
    using C = avx512::Codec<T>;
    auto* d = static_cast<T*>(dst);
    const auto* r = static_cast<const T*>(recv);
    const auto* x = static_cast<const T*>(in);
    const avx512::VecUnary<Pre> pre(args);
    size_t i = 0;
    for (; i + avx512::kStep <= count; i += avx512::kStep) {
      C::storeBits(d + i,
                   avx512::reduceStep<T, Pre, F>(pre, C::loadBits(r + i), C::loadBits(x + i)));
    }
    if (i < count) {
      const __mmask32 k = avx512::firstLanes(count - i);
      C::storeBits(d + i,
                   avx512::reduceStep<T, Pre, F>(pre, C::loadBits(r + i, k), C::loadBits(x + i, k)),
                   k);
    }
  }

  template <typename T, typename Pre, typename F>
  BRAID_TARGET_AVX512 static void reduce2(const OpArgs& args, void* dst1, void* dst2,
                                          const void* recv, const void* in, size_t count) {
    using C = avx512::Codec<T>;
    auto* d1 = static_cast<T*>(dst1);
    auto* d2 = static_cast<T*>(dst2);
    const auto* r = static_cast<const T*>(recv);
    const auto* x = static_cast<const T*>(in);
    const avx512::VecUnary<Pre> pre(args);
    size_t i = 0;
    for (; i + avx512::kStep <= count; i += avx512::kStep) {
      const auto v = avx512::reduceStep<T, Pre, F>(pre, C::loadBits(r + i), C::loadBits(x + i));
      C::storeBits(d1 + i, v);
      C::storeBits(d2 + i, v);
    }
    if (i < count) {
      const __mmask32 k = avx512::firstLanes(count - i);
      const auto v =
          avx512::reduceStep<T, Pre, F>(pre, C::loadBits(r + i, k), C::loadBits(x + i, k));
      C::storeBits(d1 + i, v, k);
      C::storeBits(d2 + i, v, k);
    }
  }

  template <typename T, typename Pre>
  BRAID_TARGET_AVX512 static void load(const OpArgs& args, void* dst, const void* in,
                                       size_t count) {
    map<T, Pre>(args, static_cast<T*>(dst), static_cast<const T*>(in), count);
  }

  template <typename T, typename Post>
  BRAID_TARGET_AVX512 static void finish(const OpArgs& args, void* buf, size_t count) {
    map<T, Post>(args, static_cast<T*>(buf), static_cast<const T*>(buf), count);
  }

 private:
  template <typename T, typename U>
  BRAID_INLINE_AVX512 static void map(const OpArgs& args, T* d, const T* x, size_t count) {
    using C = avx512::Codec<T>;
    const avx512::VecUnary<U> u(args);
    size_t i = 0;
    for (; i + avx512::kStep <= count; i += avx512::kStep) {
      C::storeBits(d + i, C::narrow(u.apply(C::widen(C::loadBits(x + i)))));
    }
    if (i < count) {
      const __mmask32 k = avx512::firstLanes(count - i);
      C::storeBits(d + i, C::narrow(u.apply(C::widen(C::loadBits(x + i, k)))), k);
    }
  }
};

}  // namespace braid::kernels::loops

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // defined(__x86_64__)
