// Loops for the fp8 types (e4m3, e5m2) on AVX-512 with VBMI: 64 elements a
// step, widened into four registers of sixteen floats. Internal to kernels/:
// included by host_reduce.cc (and its test), selected at run time on CPUs
// with AVX-512 F, BW, VL and VBMI (the AVX2+F16C loops run fp8 elsewhere).
//
// The results are the scalar functors' bit for bit:
//
//   Widening looks each code's 7-bit magnitude up in two tables of 128
//   bytes, the high and the low byte of its bfloat16 bits (one vpermi2b each
//   for 64 elements), adds the sign and widens the bfloat16 as
//   host_narrow_avx512.h does. bfloat16 holds every fp8 value exactly (3
//   mantissa bits at most, exponents within float's), and the table is
//   widenToFloat's value for each code, NaNs included. Unpacking the two
//   bytes into words puts elements 0-7 of each 128-bit lane in one register
//   and 8-15 in another; packing the codes back with vpackuswb undoes it.
//
//   Narrowing is float_types.h's narrowFromFloat on sixteen floats at a
//   time, in integer operations on the bits but for the one float addition
//   that rounds subnormal results, as the scalar code does.
//
// max and min do not come here: they compare the codes themselves, without
// floats, and host_narrow_simd.h's 256-bit loop for that outran a 512-bit
// one on AMD Zen 4 (63 against 39 GB/s from L2).
//
// F16C is not used: on AMD Zen 4 its 512-bit conversions are slow
// (host_narrow_avx512.h), and the previous loops here, fp8 through float16,
// ran one per widening and two per narrowing (docs/benchmarks.md, 2026-12-06).
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/float_types.h"
#include "kernels/host_narrow_avx512.h"
#include "kernels/reduce_op.h"

#if defined(__GNUC__) && !defined(__clang__)  // host_narrow_avx512.h says why
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#define BRAID_TARGET_AVX512_VBMI \
  __attribute__((target("avx2,f16c,avx512f,avx512bw,avx512vl,avx512vbmi")))
#define BRAID_INLINE_AVX512_VBMI \
  __attribute__((target("avx2,f16c,avx512f,avx512bw,avx512vl,avx512vbmi"), always_inline)) inline

namespace braid::kernels::loops {
namespace fp8 {

using avx512::Wide;

/// float_types.h's format of the fp8 type T.
template <typename T>
using Format = std::conditional_t<std::is_same<T, Float8e4m3>::value, detail::Float8e4m3Format,
                                  detail::Float8e5m2Format>;

/// The high and low bytes of the bfloat16 bits of every magnitude code of
/// format F (widenToFloat's value, NaNs quiet).
template <typename F>
struct Bfloat16Table {
  uint8_t high[128] = {};
  uint8_t low[128] = {};
  constexpr Bfloat16Table() {
    for (uint32_t mag = 0; mag < 128; ++mag) {
      const uint32_t bits = of(mag);
      high[mag] = static_cast<uint8_t>(bits >> 8);
      low[mag] = static_cast<uint8_t>(bits);
    }
  }
  static constexpr uint32_t of(uint32_t mag) {
    const uint32_t man = mag & F::kManMask;
    const uint32_t exp = mag >> F::kManBits;
    if (F::kIeee ? mag >= F::kInfCode : mag == F::kMagMask) {  // infinity or NaN
      return 0x7f80u | (man << (7 - F::kManBits)) | (man != 0 ? 0x40u : 0u);
    }
    if (exp != 0) return ((exp + 127 - F::kBias) << 7) | (man << (7 - F::kManBits));
    if (man == 0) return 0;
    // A subnormal, man units of 2^(1 - bias - kManBits), normalized.
    uint32_t lead = 0;
    while ((man >> (lead + 1)) != 0) ++lead;
    return ((lead + 1 + 127 - F::kBias - F::kManBits) << 7) | ((man << (7 - lead)) & 0x7fu);
  }
};

/// 64 elements as floats: bytes 0-7 of each 128-bit lane of the step in
/// `lo`, bytes 8-15 in `hi`, each as bfloat16's even / odd layout.
struct Wide2 {
  Wide lo, hi;
};

template <typename T>
struct Codec {
  using F = Format<T>;
  using Bits = __m512i;
  static constexpr size_t kStep = 64;
  static constexpr Bfloat16Table<F> kTable{};

  __m512i high0, high1, low0, low1;
  BRAID_INLINE_AVX512_VBMI Codec()
      : high0(_mm512_loadu_si512(kTable.high)),
        high1(_mm512_loadu_si512(kTable.high + 64)),
        low0(_mm512_loadu_si512(kTable.low)),
        low1(_mm512_loadu_si512(kTable.low + 64)) {}

  /// The mask of the first `n` (< 64) elements of a step.
  BRAID_INLINE_AVX512_VBMI static __mmask64 firstLanes(size_t n) { return (uint64_t{1} << n) - 1; }
  BRAID_INLINE_AVX512_VBMI static Bits loadBits(const T* p) { return _mm512_loadu_si512(p); }
  BRAID_INLINE_AVX512_VBMI static Bits loadBits(const T* p, __mmask64 k) {
    return _mm512_maskz_loadu_epi8(k, p);
  }
  BRAID_INLINE_AVX512_VBMI static void storeBits(T* p, Bits b) { _mm512_storeu_si512(p, b); }
  BRAID_INLINE_AVX512_VBMI static void storeBits(T* p, Bits b, __mmask64 k) {
    _mm512_mask_storeu_epi8(p, k, b);
  }

  /// Where element j of a step sits among the 64 floats lo.a, lo.b, hi.a, hi.b.
  static constexpr int lane(int j) {
    const int word = j / 16 * 8 + j % 8;  // in lo or hi
    return (j % 16 < 8 ? 0 : 32) + (word % 2) * 16 + word / 2;
  }

  BRAID_INLINE_AVX512_VBMI Wide2 widen(Bits b) const {
    // vpermi2b reads index bits 0-6: the magnitude.
    __m512i high = _mm512_permutex2var_epi8(high0, b, high1);
    const __m512i low = _mm512_permutex2var_epi8(low0, b, low1);
    high = _mm512_ternarylogic_epi32(high, b, _mm512_set1_epi8(-0x80), 0xf8);  // | sign
    return {avx512::Codec<Bfloat16>::widen(_mm512_unpacklo_epi8(low, high)),
            avx512::Codec<Bfloat16>::widen(_mm512_unpackhi_epi8(low, high))};
  }

  /// narrowFromFloat of sixteen floats: each code in the low byte of its lane.
  BRAID_INLINE_AVX512_VBMI static __m512i narrowLanes(__m512 v) {
    constexpr int kShift = F::kShift;
    // Normal results: rebias, add just under half an ulp plus the kept lsb,
    // shift, saturate (infinity too).
    constexpr uint32_t kRound =
        (static_cast<uint32_t>(F::kBias - 127) << 23) + (1u << (kShift - 1)) - 1;
    // Subnormal results: the float adder rounds at the step of kMagic's ulp.
    constexpr uint32_t kMagic = static_cast<uint32_t>(127 + 24 - F::kBias - F::kManBits) << 23;
    const __m512i u = _mm512_castps_si512(v);
    const __m512i a = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(a, kShift), _mm512_set1_epi32(1));
    __m512i normal = _mm512_add_epi32(_mm512_add_epi32(a, _mm512_set1_epi32(kRound)), lsb);
    normal = _mm512_min_epu32(_mm512_srli_epi32(normal, kShift), _mm512_set1_epi32(F::kMaxFinite));
    const __m512i magic = _mm512_set1_epi32(kMagic);
    const __m512 sum = _mm512_add_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(magic));
    const __m512i sub = _mm512_sub_epi32(_mm512_castps_si512(sum), magic);
    const __mmask16 small = _mm512_cmplt_epu32_mask(a, _mm512_set1_epi32(F::kMinNormalFloatBits));
    __m512i out = _mm512_mask_mov_epi32(normal, small, sub);
    // NaN: e4m3's one NaN; e5m2 keeps the leading payload and gets the quiet bit.
    __m512i nan = _mm512_set1_epi32(F::kMagMask);
    if constexpr (F::kIeee) {
      nan = _mm512_ternarylogic_epi32(_mm512_srli_epi32(a, kShift), _mm512_set1_epi32(0x7f),
                                      _mm512_set1_epi32(F::kQuietBit), 0xea);  // a & b | c
    }
    out =
        _mm512_mask_mov_epi32(out, _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7f800000)), nan);
    // | (u >> 24 & 0x80): the sign
    return _mm512_ternarylogic_epi32(out, _mm512_srli_epi32(u, 24), _mm512_set1_epi32(0x80), 0xf8);
  }

  /// The codes of one Wide (even elements in the low, odd in the high words).
  BRAID_INLINE_AVX512_VBMI static __m512i narrowWords(Wide v) {
    return _mm512_or_si512(narrowLanes(v.a), _mm512_slli_epi32(narrowLanes(v.b), 16));
  }
  BRAID_INLINE_AVX512_VBMI static Bits narrow(Wide2 v) {
    // Every word holds a code below 256, so the saturating pack is exact.
    return _mm512_packus_epi16(narrowWords(v.lo), narrowWords(v.hi));
  }
};

template <typename F>
BRAID_INLINE_AVX512 Wide2 apply(Wide2 x, Wide2 y) {
  return {avx512::apply<F>(x.lo, y.lo), avx512::apply<F>(x.hi, y.hi)};
}

/// The unary functors, as host_narrow_avx512.h's VecUnary on all four registers.
template <typename U>
struct VecUnary;
template <typename T>
struct VecUnary<FuncIdentity<T>> {
  explicit VecUnary(const OpArgs&) {}
  BRAID_INLINE_AVX512 Wide2 apply(Wide2 x) const { return x; }
};
template <typename T>
struct VecUnary<FuncPreMul<T>> {
  Codec<T> codec;
  float scalar;
  BRAID_INLINE_AVX512_VBMI explicit VecUnary(const OpArgs& args)
      : scalar(FuncPreMul<T>(args).scalar.toFloat()) {}
  BRAID_INLINE_AVX512 static Wide times(__m512 s, Wide x) {
    return {_mm512_mul_ps(s, x.a), _mm512_mul_ps(s, x.b)};
  }
  // The product rounds to T at once, as the scalar functor's does.
  BRAID_INLINE_AVX512_VBMI Wide2 apply(Wide2 x) const {
    const __m512 s = _mm512_set1_ps(scalar);
    return codec.widen(codec.narrow({times(s, x.lo), times(s, x.hi)}));
  }
};
template <typename T>
struct VecUnary<FuncDiv<T>> {
  avx512::VecUnary<FuncDiv<T>> div;
  explicit VecUnary(const OpArgs& args) : div(args) {}
  BRAID_INLINE_AVX512 Wide2 apply(Wide2 x) const { return {div.apply(x.lo), div.apply(x.hi)}; }
};

/// One step of a reduce: op(recv, pre(in)).
template <typename T, typename Pre, typename F>
struct ReduceStep {
  Codec<T> codec;
  VecUnary<Pre> pre;
  BRAID_INLINE_AVX512_VBMI explicit ReduceStep(const OpArgs& args) : pre(args) {}
  BRAID_INLINE_AVX512_VBMI __m512i operator()(__m512i r, __m512i x) const {
    return codec.narrow(apply<F>(codec.widen(r), pre.apply(codec.widen(x))));
  }
};

/// One step of a load or finish: u(x).
template <typename T, typename U>
struct MapStep {
  Codec<T> codec;
  VecUnary<U> u;
  BRAID_INLINE_AVX512_VBMI explicit MapStep(const OpArgs& args) : u(args) {}
  BRAID_INLINE_AVX512_VBMI __m512i operator()(__m512i x) const {
    return codec.narrow(u.apply(codec.widen(x)));
  }
};

}  // namespace fp8

/// The loops of the fp8 types, 64 elements a step.
BRAID_STEP_LOOPS(Fp8Avx512Loops, BRAID_TARGET_AVX512_VBMI, fp8);

}  // namespace braid::kernels::loops

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // defined(__x86_64__)
