// The 16- and 8-bit floating types of NCCL's datatype list, as braid's own
// value types: float16 (IEEE binary16), bfloat16, and the two OCP fp8 formats,
// e4m3 (no infinity, one NaN per sign) and e5m2 (IEEE-like).
//
// Each is a struct holding the bits. Arithmetic is never done on them
// directly: the reduction functors widen to float, compute, and narrow back
// (kernels/reduce_op.h), as NCCL does. The conversions are written once for
// every format, on the bits, without branches, so that GCC vectorizes them in
// the host loops and nvcc compiles the very same code for the GPU: host and
// device give the same bits by construction where the GPU lacks conversion
// instructions.
//
// On the GPU the conversions are the hardware's (cvt, with .satfinite for
// fp8 on sm_89 and later), which round the same way and saturate the same
// way; they differ only in the bits of NaN results, which come out as the
// canonical NaN, as float arithmetic on the GPU does (tests/engine checks both).
//
// Conversion rules:
//   - widening to float is exact; a signaling NaN comes back quiet (the quiet
//     bit set, sign and leading payload kept), as x86's F16C does;
//   - narrowing rounds to nearest, ties to even, subnormals included;
//   - float16 and bfloat16 overflow to infinity; the fp8 formats saturate to
//     their largest finite value, infinities included (NCCL converts with
//     CUDA's __NV_SATFINITE);
//   - NaN stays NaN with its sign: float16, bfloat16 and e5m2 keep the
//     leading payload bits and set the quiet bit; e4m3 has one NaN, S.1111.111.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/host_device.h"

namespace braid::kernels {
namespace detail {

/// A binary floating format narrower than float: kExp exponent bits, kMan
/// stored mantissa bits, whether the top exponent encodes inf/NaN the IEEE
/// way (else only all-ones is NaN, as in e4m3), and whether overflow
/// saturates to the largest finite value instead of becoming infinity.
template <int kExp, int kMan, bool kIeeeSpecials, bool kSaturate>
struct SmallFormat {
  static constexpr int kExpBits = kExp;
  static constexpr int kManBits = kMan;
  static constexpr int kBias = (1 << (kExp - 1)) - 1;
  static constexpr int kShift = 23 - kMan;  ///< mantissa bits float has and the format lacks
  static constexpr uint32_t kSignBit = 1u << (kExp + kMan);
  static constexpr uint32_t kMagMask = kSignBit - 1;
  static constexpr uint32_t kManMask = (1u << kMan) - 1;
  static constexpr uint32_t kInfCode = ((1u << kExp) - 1) << kMan;
  static constexpr uint32_t kMaxFinite = kIeeeSpecials ? kInfCode - 1 : kMagMask - 1;
  static constexpr uint32_t kOverflowCode = kSaturate ? kMaxFinite : kInfCode;
  static constexpr uint32_t kQuietBit = 1u << (kMan - 1);
  static constexpr bool kIeee = kIeeeSpecials;
  static constexpr bool kSaturating = kSaturate;
  /// Float bits of the smallest normal value of the format.
  static constexpr uint32_t kMinNormalFloatBits = static_cast<uint32_t>(127 + 1 - kBias) << 23;
};

using Float16Format = SmallFormat<5, 10, true, false>;
using Bfloat16Format = SmallFormat<8, 7, true, false>;
using Float8e4m3Format = SmallFormat<4, 3, false, true>;
using Float8e5m2Format = SmallFormat<5, 2, true, true>;

/// The exact float value of a format's bit pattern.
template <typename F>
BRAID_HOST_DEVICE float widenToFloat(uint32_t bits) {
  const uint32_t sign = (bits & F::kSignBit) << (31 - F::kExpBits - F::kManBits);
  const uint32_t mag = bits & F::kMagMask;
  if constexpr (F::kBias == 127) {
    // bfloat16 shares float's exponent: its bits are float's top half,
    // subnormals and infinities included; NaNs only need their quiet bit.
    return floatFromBits((bits << F::kShift) | (mag > F::kInfCode ? 0x00400000u : 0u));
  } else {
    const uint32_t man = mag & F::kManMask;
    // Normal numbers: the same mantissa, the exponent rebiased.
    const uint32_t normal = (mag << F::kShift) + (static_cast<uint32_t>(127 - F::kBias) << 23);
    const bool special = F::kIeee ? mag >= F::kInfCode : mag == F::kMagMask;
    const uint32_t quiet = man != 0 ? 0x00400000u : 0u;
    const uint32_t specialBits = 0x7f800000u | (man << F::kShift) | quiet;
    // Subnormals: mag counts units of the smallest subnormal, a power of two
    // that float holds as a normal number, so the product is exact.
    const float unit = floatFromBits(static_cast<uint32_t>(127 + 1 - F::kBias - F::kManBits) << 23);
    const float sub = mulRn(static_cast<float>(static_cast<int32_t>(mag)), unit);
    uint32_t out = special ? specialBits : normal;
    out = mag <= F::kManMask ? floatBits(sub) : out;
    return floatFromBits(out | sign);
  }
}

/// The format's bits for a float, rounded to nearest even (see the rules above).
template <typename F>
BRAID_HOST_DEVICE uint32_t narrowFromFloat(float f) {
  const uint32_t u = floatBits(f);
  const uint32_t a = u & 0x7fffffffu;
  const uint32_t lsb = (a >> F::kShift) & 1u;  // of the kept mantissa: ties go to even
  const uint32_t nan =
      F::kIeee ? F::kInfCode | F::kQuietBit | ((a >> F::kShift) & F::kManMask) : F::kMagMask;
  if constexpr (F::kBias == 127 && !F::kSaturating) {
    // bfloat16: rounding float's bits at bit 16 is the whole conversion; a
    // carry out of the largest finite value gives infinity, as it should.
    const uint32_t rounded = (u + (1u << (F::kShift - 1)) - 1 + lsb) >> F::kShift;
    const uint32_t sign = (u >> 31) << (F::kExpBits + F::kManBits);
    return a > 0x7f800000u ? sign | nan : rounded;
  } else {
    const uint32_t sign = (u >> 31) << (F::kExpBits + F::kManBits);
    // Normal results: rebias the exponent (unsigned arithmetic, wrapping when
    // the rebias is negative), add just under half an ulp plus the kept lsb
    // so that the shift rounds to nearest even, then clamp overflow.
    const uint32_t rebias = static_cast<uint32_t>(F::kBias - 127) << 23;
    uint32_t normal = (a + rebias + (1u << (F::kShift - 1)) - 1 + lsb) >> F::kShift;
    normal = normal > F::kMaxFinite ? F::kOverflowCode : normal;
    // Results below the smallest normal: adding a power of two whose float
    // ulp is the format's subnormal step makes the float adder round to
    // nearest even at that step; the bits above that power are the result (a
    // result of 2^kMan units is the smallest normal, encoded the same).
    const float magic =
        floatFromBits(static_cast<uint32_t>(127 + 24 - F::kBias - F::kManBits) << 23);
    const uint32_t sub = floatBits(addRn(floatFromBits(a), magic)) - floatBits(magic);
    uint32_t out = a < F::kMinNormalFloatBits ? sub : normal;
    out = a > 0x7f800000u ? nan : out;
    return out | sign;
  }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
// The hardware's fp8 conversions (sm_89 and later), which take and give pairs.
template <bool kE4m3>
__device__ __forceinline__ uint8_t fp8FromFloatHw(float f) {
  uint16_t pair;
  if constexpr (kE4m3) {
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(f));
  } else {
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(f));
  }
  return static_cast<uint8_t>(pair & 0xff);
}

template <bool kE4m3>
__device__ __forceinline__ float fp8ToFloatHw(uint8_t bits) {
  uint32_t halves;
  const uint16_t pair = bits;
  if constexpr (kE4m3) {
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(halves) : "h"(pair));
  } else {
    asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(halves) : "h"(pair));
  }
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(static_cast<uint16_t>(halves & 0xffff)));
  return f;
}
#endif

}  // namespace detail

/// IEEE 754 binary16 ("half").
struct Float16 {
  uint16_t bits;
  BRAID_HOST_DEVICE static Float16 fromFloat(float f) {
#if defined(__CUDA_ARCH__)
    uint16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return Float16{h};
#else
    return Float16{static_cast<uint16_t>(detail::narrowFromFloat<detail::Float16Format>(f))};
#endif
  }
  BRAID_HOST_DEVICE float toFloat() const {
#if defined(__CUDA_ARCH__)
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
#else
    return detail::widenToFloat<detail::Float16Format>(bits);
#endif
  }
};

/// bfloat16: float's sign and exponent with 7 mantissa bits.
struct Bfloat16 {
  uint16_t bits;
  BRAID_HOST_DEVICE static Bfloat16 fromFloat(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    uint16_t h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return Bfloat16{h};
#else
    return Bfloat16{static_cast<uint16_t>(detail::narrowFromFloat<detail::Bfloat16Format>(f))};
#endif
  }
  BRAID_HOST_DEVICE float toFloat() const {
    return detail::widenToFloat<detail::Bfloat16Format>(bits);
  }
};

/// OCP fp8 E4M3 ("FN"): bias 7, no infinity, largest finite 448, NaN 0x7f/0xff.
struct Float8e4m3 {
  uint8_t bits;
  BRAID_HOST_DEVICE static Float8e4m3 fromFloat(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    return Float8e4m3{detail::fp8FromFloatHw<true>(f)};
#else
    return Float8e4m3{static_cast<uint8_t>(detail::narrowFromFloat<detail::Float8e4m3Format>(f))};
#endif
  }
  BRAID_HOST_DEVICE float toFloat() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    return detail::fp8ToFloatHw<true>(bits);
#else
    return detail::widenToFloat<detail::Float8e4m3Format>(bits);
#endif
  }
};

/// OCP fp8 E5M2: bias 15, IEEE-like infinities and NaNs, largest finite 57344.
struct Float8e5m2 {
  uint8_t bits;
  BRAID_HOST_DEVICE static Float8e5m2 fromFloat(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    return Float8e5m2{detail::fp8FromFloatHw<false>(f)};
#else
    return Float8e5m2{static_cast<uint8_t>(detail::narrowFromFloat<detail::Float8e5m2Format>(f))};
#endif
  }
  BRAID_HOST_DEVICE float toFloat() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    return detail::fp8ToFloatHw<false>(bits);
#else
    return detail::widenToFloat<detail::Float8e5m2Format>(bits);
#endif
  }
};

static_assert(sizeof(Float16) == 2 && sizeof(Bfloat16) == 2, "16-bit types hold only their bits");
static_assert(sizeof(Float8e4m3) == 1 && sizeof(Float8e5m2) == 1, "fp8 types hold only their bits");
static_assert(std::is_trivially_copyable<Float16>::value, "memcpy-able like the C types");

/// Whether T is one of the types above, whose arithmetic goes through float.
template <typename T>
struct IsNarrowFloat : std::false_type {};
template <>
struct IsNarrowFloat<Float16> : std::true_type {};
template <>
struct IsNarrowFloat<Bfloat16> : std::true_type {};
template <>
struct IsNarrowFloat<Float8e4m3> : std::true_type {};
template <>
struct IsNarrowFloat<Float8e5m2> : std::true_type {};
template <typename T>
inline constexpr bool kIsNarrowFloat = IsNarrowFloat<T>::value;

}  // namespace braid::kernels
