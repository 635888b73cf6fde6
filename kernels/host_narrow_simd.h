// Loops for the 16- and 8-bit float types that convert eight elements per
// short instruction sequence: float16 with F16C (vcvtph2ps / vcvtps2ph),
// bfloat16 with a few AVX2 integer operations, fp8 through float16 with F16C.
// Compilers do not find these forms in the generic loops, which then run at a
// fraction of memory bandwidth. Internal to kernels/: included by
// host_reduce.cc (and its test), selected at run time on CPUs with AVX2 and
// F16C.
//
// The results are the scalar functors' bit for bit: F16C widens exactly and
// narrows with round-to-nearest-even and the NaN rules of float_types.h; the
// bfloat16 code is float_types.h's own arithmetic on eight lanes; the fp8
// codes go through float16 exactly (see their Codec); the float operations
// between are the same IEEE operations. (Widening bfloat16 here leaves a
// signaling NaN signaling where toFloat() quiets it: no result can tell, as
// every operation either quiets it or hands it to a narrowing, which does.)
// One freedom remains, in every build alike: when both operands are NaN,
// IEEE 754 leaves open whose payload the result carries, and compilers swap
// the operands of commutative operations. The tests run every pair through
// every build.
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstddef>
#include <type_traits>

#include "kernels/float_types.h"
#include "kernels/host_loops.h"
#include "kernels/reduce_op.h"

#define BRAID_TARGET_SIMD __attribute__((target("avx2,f16c")))
#define BRAID_INLINE_SIMD __attribute__((target("avx2,f16c"), always_inline)) inline

namespace braid::kernels::loops {
namespace simd {

/// Eight elements of T to and from eight floats: the element bits travel in
/// the low 64 (8-bit types) or 128 (16-bit types) bits of an xmm register.
template <typename T>
struct Codec;

template <>
struct Codec<Float16> {
  BRAID_INLINE_SIMD static __m128i loadBits(const Float16* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  }
  BRAID_INLINE_SIMD static void storeBits(Float16* p, __m128i h) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
  }
  BRAID_INLINE_SIMD static __m256 widen(__m128i h) { return _mm256_cvtph_ps(h); }
  BRAID_INLINE_SIMD static __m128i narrow(__m256 v) {
    return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
};

template <>
struct Codec<Bfloat16> {
  BRAID_INLINE_SIMD static __m128i loadBits(const Bfloat16* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  }
  BRAID_INLINE_SIMD static void storeBits(Bfloat16* p, __m128i h) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
  }
  BRAID_INLINE_SIMD static __m256 widen(__m128i h) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  // narrowFromFloat for bfloat16: round at bit 16 to nearest even; NaN keeps
  // its sign and leading payload and gets the quiet bit.
  BRAID_INLINE_SIMD static __m128i narrow(__m256 v) {
    const __m256i u = _mm256_castps_si256(v);
    const __m256i high = _mm256_srli_epi32(u, 16);
    const __m256i lsb = _mm256_and_si256(high, _mm256_set1_epi32(1));
    const __m256i bias = _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, bias), 16);
    const __m256i nan = _mm256_or_si256(high, _mm256_set1_epi32(0x40));
    const __m256i magnitude = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    const __m256i isNan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7f800000));
    const __m256i out = _mm256_blendv_epi8(rounded, nan, isNan);
    // Every lane holds a value below 2^16, so the saturating pack is exact.
    return _mm_packus_epi32(_mm256_castsi256_si128(out), _mm256_extracti128_si256(out, 1));
  }
};

/// v rounded to float16 precision toward zero, then "to odd": the last bit
/// set when the truncation lost anything. Rounding that again to nearest
/// even at 2 or more bits fewer gives what rounding v directly would (the
/// classic round-to-odd property), which is how the fp8 codes below get
/// float's correct rounding out of F16C. Eight float16 results in 16-bit lanes.
BRAID_INLINE_SIMD __m128i float16RoundToOdd(__m256 v) {
  const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 inexact = _mm256_cmp_ps(_mm256_cvtph_ps(h), v, _CMP_NEQ_UQ);
  const __m256i lanes = _mm256_castps_si256(inexact);
  const __m128i mask =
      _mm_packs_epi32(_mm256_castsi256_si128(lanes), _mm256_extracti128_si256(lanes, 1));
  return _mm_or_si128(h, _mm_and_si128(mask, _mm_set1_epi16(1)));
}

/// The fp8 codes as float16 bit patterns (16-bit lanes), and back.
///   e5m2 is float16's top byte: widening is a shift; narrowing rounds the
///   low byte of the round-to-odd float16 to nearest even.
///   e4m3 shifted left by 7 is a float16 of 2^-8 times its value, subnormals
///   included (the exponents line up), so it widens through float16 and a
///   multiplication by 256, and narrows from v * 2^-8 the same way as e5m2
///   with 7 bits dropped. Both saturate; NaN follows float_types.h.
template <typename T>
struct Fp8Codec {
  static constexpr bool kE4m3 = std::is_same<T, Float8e4m3>::value;
  static constexpr int kDrop = kE4m3 ? 7 : 8;               // float16 bits below the fp8 code
  static constexpr short kMaxFinite = kE4m3 ? 0x7e : 0x7b;  // fp8 magnitude code
  static constexpr float kScale = kE4m3 ? 256.0f : 1.0f;    // fp8 value / float16 value

  BRAID_INLINE_SIMD static __m128i loadBits(const T* p) {
    return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  }
  BRAID_INLINE_SIMD static void storeBits(T* p, __m128i b) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), b);
  }
  BRAID_INLINE_SIMD static __m256 widen(__m128i b) {
    const __m128i w = _mm_cvtepu8_epi16(b);
    if constexpr (kE4m3) {
      const __m128i sign = _mm_slli_epi16(_mm_and_si128(w, _mm_set1_epi16(0x80)), 8);
      const __m128i mag = _mm_and_si128(w, _mm_set1_epi16(0x7f));
      // S.1111.111 is NaN: move it to float16's NaN 0x7f80 (payload 0b111,
      // as float_types.h widens it) by adding 0x4000 to 0x3f80.
      const __m128i isNan = _mm_cmpeq_epi16(mag, _mm_set1_epi16(0x7f));
      const __m128i h =
          _mm_add_epi16(_mm_slli_epi16(mag, 7), _mm_and_si128(isNan, _mm_set1_epi16(0x4000)));
      return _mm256_mul_ps(_mm256_cvtph_ps(_mm_or_si128(h, sign)), _mm256_set1_ps(kScale));
    } else {
      return _mm256_cvtph_ps(_mm_slli_epi16(w, 8));
    }
  }
  BRAID_INLINE_SIMD static __m128i narrow(__m256 v) {
    if constexpr (kE4m3) v = _mm256_mul_ps(v, _mm256_set1_ps(1.0f / kScale));
    const __m128i h = float16RoundToOdd(v);
    const __m128i sign = _mm_srli_epi16(_mm_and_si128(h, _mm_set1_epi16(-0x8000)), 8);
    const __m128i m = _mm_and_si128(h, _mm_set1_epi16(0x7fff));
    const __m128i lsb = _mm_and_si128(_mm_srli_epi16(m, kDrop), _mm_set1_epi16(1));
    const __m128i half = _mm_set1_epi16((1 << (kDrop - 1)) - 1);
    __m128i code = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(m, half), lsb), kDrop);
    code = _mm_min_epu16(code, _mm_set1_epi16(kMaxFinite));  // saturate, infinity included
    // NaN: e4m3's one NaN; e5m2 keeps float16's top byte (quiet bit set by F16C).
    const __m128i isNan = _mm_cmpgt_epi16(m, _mm_set1_epi16(0x7c00));
    const __m128i nan = kE4m3 ? _mm_set1_epi16(0x7f) : _mm_srli_epi16(m, 8);
    code = _mm_or_si128(_mm_blendv_epi8(code, nan, isNan), sign);
    return _mm_packus_epi16(code, code);
  }
};

template <>
struct Codec<Float8e4m3> : Fp8Codec<Float8e4m3> {};
template <>
struct Codec<Float8e5m2> : Fp8Codec<Float8e5m2> {};

template <typename T>
BRAID_INLINE_SIMD __m256 load(const T* p) {
  return Codec<T>::widen(Codec<T>::loadBits(p));
}

template <typename T>
BRAID_INLINE_SIMD void store(T* p, __m256 v) {
  Codec<T>::storeBits(p, Codec<T>::narrow(v));
}

/// The float value of the T nearest to v (what a store and a load give).
template <typename T>
BRAID_INLINE_SIMD __m256 round(__m256 v) {
  return Codec<T>::widen(Codec<T>::narrow(v));
}

/// The float operation inside each binary functor, eight lanes at a time.
template <typename F>
struct VecOp;
template <typename T>
struct VecOp<FuncSum<T>> {
  BRAID_INLINE_SIMD static __m256 apply(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
};
template <typename T>
struct VecOp<FuncProd<T>> {
  BRAID_INLINE_SIMD static __m256 apply(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
};
template <typename T>
struct VecOp<FuncMax<T>> {
  // a < b ? b : a (ordered compare: a NaN operand keeps a)
  BRAID_INLINE_SIMD static __m256 apply(__m256 a, __m256 b) {
    return _mm256_blendv_ps(a, b, _mm256_cmp_ps(a, b, _CMP_LT_OQ));
  }
};
template <typename T>
struct VecOp<FuncMin<T>> {
  // b < a ? b : a
  BRAID_INLINE_SIMD static __m256 apply(__m256 a, __m256 b) {
    return _mm256_blendv_ps(a, b, _mm256_cmp_ps(b, a, _CMP_LT_OQ));
  }
};

/// The float operation of each unary functor (pre and post), with its factor
/// or divisor read once per call. Rounding to T happens at the store, or
/// explicitly where a rounded value is used again (premulsum's product).
template <typename U>
struct VecUnary;
template <typename T>
struct VecUnary<FuncIdentity<T>> {
  explicit VecUnary(const OpArgs&) {}
  BRAID_INLINE_SIMD __m256 apply(__m256 x) const { return x; }
};
template <typename T>
struct VecUnary<FuncPreMul<T>> {
  float scalar;
  explicit VecUnary(const OpArgs& args) : scalar(FuncPreMul<T>(args).scalar.toFloat()) {}
  BRAID_INLINE_SIMD __m256 apply(__m256 x) const {
    return round<T>(_mm256_mul_ps(_mm256_set1_ps(scalar), x));
  }
};
template <typename T>
struct VecUnary<FuncDiv<T>> {
  float nranks;
  explicit VecUnary(const OpArgs& args) : nranks(static_cast<float>(args.nranks)) {}
  BRAID_INLINE_SIMD __m256 apply(__m256 x) const {
    return _mm256_div_ps(x, _mm256_set1_ps(nranks));
  }
};

/// fp8 max and min on the codes, 32 at a time, as host_fp8_avx512.h's
/// OrderStep (which explains why that is the scalar functors' result): the
/// codes compare as signed magnitudes (vpsignb negates a magnitude where its
/// code is negative), recv's code stays when either is NaN, and e5m2's
/// NaNs become quiet and its infinities the largest finite value.
template <typename T, typename F>
struct CodeOrder {
  static constexpr bool kOn = false;
};
template <typename T, bool kMax>
struct Fp8CodeOrder {
  static constexpr bool kOn = true;
  static constexpr bool kE4m3 = std::is_same<T, Float8e4m3>::value;
  BRAID_INLINE_SIMD static __m256i isNan(__m256i mag) {
    if constexpr (kE4m3) return _mm256_cmpeq_epi8(mag, _mm256_set1_epi8(0x7f));
    return _mm256_cmpgt_epi8(mag, _mm256_set1_epi8(0x7c));
  }
  BRAID_INLINE_SIMD static __m256i apply(__m256i r, __m256i x) {
    const __m256i magR = _mm256_and_si256(r, _mm256_set1_epi8(0x7f));
    const __m256i magX = _mm256_and_si256(x, _mm256_set1_epi8(0x7f));
    const __m256i keyR = _mm256_sign_epi8(magR, r), keyX = _mm256_sign_epi8(magX, x);
    // max: r < x ? x : r; min: x < r ? x : r
    const __m256i less = kMax ? _mm256_cmpgt_epi8(keyX, keyR) : _mm256_cmpgt_epi8(keyR, keyX);
    const __m256i nanR = isNan(magR);
    const __m256i takeX = _mm256_andnot_si256(_mm256_or_si256(nanR, isNan(magX)), less);
    __m256i out = _mm256_blendv_epi8(r, x, takeX);
    if constexpr (!kE4m3) {
      out = _mm256_blendv_epi8(out, _mm256_or_si256(r, _mm256_set1_epi8(0x02)), nanR);
      const __m256i mag = _mm256_and_si256(out, _mm256_set1_epi8(0x7f));
      // minus one where the magnitude is infinity's 0x7c
      out = _mm256_add_epi8(out, _mm256_cmpeq_epi8(mag, _mm256_set1_epi8(0x7c)));
    }
    return out;
  }
  BRAID_INLINE_SIMD static __m256i load(const T* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  BRAID_INLINE_SIMD static void store(T* p, __m256i v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
};
template <>
struct CodeOrder<Float8e4m3, FuncMax<Float8e4m3>> : Fp8CodeOrder<Float8e4m3, true> {};
template <>
struct CodeOrder<Float8e4m3, FuncMin<Float8e4m3>> : Fp8CodeOrder<Float8e4m3, false> {};
template <>
struct CodeOrder<Float8e5m2, FuncMax<Float8e5m2>> : Fp8CodeOrder<Float8e5m2, true> {};
template <>
struct CodeOrder<Float8e5m2, FuncMin<Float8e5m2>> : Fp8CodeOrder<Float8e5m2, false> {};

}  // namespace simd

/// The loops of the 16- and 8-bit float types, eight elements a step (fp8
/// max and min 32); the tails run the scalar functors.
struct NarrowSimdLoops {
  template <typename T, typename Pre, typename F>
  BRAID_TARGET_SIMD static void reduce(const OpArgs& args, void* dst, const void* recv,
                                       const void* in, size_t count) {
    auto* d = static_cast<T*>(dst);
    const auto* r = static_cast<const T*>(recv);
    const auto* x = static_cast<const T*>(in);
    const simd::VecUnary<Pre> pre(args);
    size_t i = 0;
    if constexpr (simd::CodeOrder<T, F>::kOn) {
      using O = simd::CodeOrder<T, F>;
      for (; i + 32 <= count; i += 32) O::store(d + i, O::apply(O::load(r + i), O::load(x + i)));
    }
    for (; i + 8 <= count; i += 8) {
      simd::store(d + i, simd::VecOp<F>::apply(simd::load(r + i), pre.apply(simd::load(x + i))));
    }
    reduceBody<T, Pre, F>(args, d + i, r + i, x + i, count - i);
  }

  template <typename T, typename Pre, typename F>
  BRAID_TARGET_SIMD static void reduce2(const OpArgs& args, void* dst1, void* dst2,
                                        const void* recv, const void* in, size_t count) {
    using C = simd::Codec<T>;
    auto* d1 = static_cast<T*>(dst1);
    auto* d2 = static_cast<T*>(dst2);
    const auto* r = static_cast<const T*>(recv);
    const auto* x = static_cast<const T*>(in);
    const simd::VecUnary<Pre> pre(args);
    size_t i = 0;
    if constexpr (simd::CodeOrder<T, F>::kOn) {
      using O = simd::CodeOrder<T, F>;
      for (; i + 32 <= count; i += 32) {
        const __m256i v = O::apply(O::load(r + i), O::load(x + i));
        O::store(d1 + i, v);
        O::store(d2 + i, v);
      }
    }
    for (; i + 8 <= count; i += 8) {
      const __m128i v =
          C::narrow(simd::VecOp<F>::apply(simd::load(r + i), pre.apply(simd::load(x + i))));
      C::storeBits(d1 + i, v);
      C::storeBits(d2 + i, v);
    }
    reduce2Body<T, Pre, F>(args, d1 + i, d2 + i, r + i, x + i, count - i);
  }

  template <typename T, typename Pre>
  BRAID_TARGET_SIMD static void load(const OpArgs& args, void* dst, const void* in, size_t count) {
    map<T, Pre>(args, static_cast<T*>(dst), static_cast<const T*>(in), count);
  }

  template <typename T, typename Post>
  BRAID_TARGET_SIMD static void finish(const OpArgs& args, void* buf, size_t count) {
    map<T, Post>(args, static_cast<T*>(buf), static_cast<const T*>(buf), count);
  }

 private:
  template <typename T, typename U>
  BRAID_INLINE_SIMD static void map(const OpArgs& args, T* d, const T* x, size_t count) {
    const simd::VecUnary<U> u(args);
    size_t i = 0;
    for (; i + 8 <= count; i += 8) simd::store(d + i, u.apply(simd::load(x + i)));
    mapBody<T, U>(args, d + i, x + i, count - i);
  }
};

}  // namespace braid::kernels::loops

#endif  // defined(__x86_64__)
