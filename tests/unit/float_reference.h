// An independent model of the narrow float formats for the tests: values
// from the format's definition with ldexp, rounding with nearbyint on a
// scaled double, encoding by search in the table of values. Nothing here
// shares code or tricks with kernels/float_types.h, so agreement means the
// bit manipulation there is right.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace braid::reference {

struct FormatSpec {
  int expBits;
  int manBits;
  bool ieee;      ///< top exponent is inf/NaN (else only all-ones is NaN, as in e4m3)
  bool saturate;  ///< overflow gives the largest finite value instead of infinity
};

inline constexpr FormatSpec kHalfSpec{5, 10, true, false};
inline constexpr FormatSpec kBfloat16Spec{8, 7, true, false};
inline constexpr FormatSpec kE4m3Spec{4, 3, false, true};
inline constexpr FormatSpec kE5m2Spec{5, 2, true, true};

class FormatModel {
 public:
  explicit FormatModel(FormatSpec spec) : spec_(spec) {
    bias_ = (1 << (spec.expBits - 1)) - 1;
    signBit_ = 1u << (spec.expBits + spec.manBits);
    const uint32_t expOnes = (1u << spec.expBits) - 1;
    maxCode_ = spec.ieee ? (expOnes << spec.manBits) - 1 : signBit_ - 2;
    for (uint32_t c = 0; c <= maxCode_; ++c) values_.push_back(decode(c));
  }

  uint32_t signBit() const { return signBit_; }
  uint32_t maxFiniteCode() const { return maxCode_; }
  double maxFinite() const { return values_.back(); }
  int patterns() const { return static_cast<int>(signBit_ * 2); }

  /// The value a bit pattern stands for.
  double decode(uint32_t bits) const {
    const bool negative = (bits & signBit_) != 0;
    const uint32_t e = (bits >> spec_.manBits) & ((1u << spec_.expBits) - 1);
    const uint32_t m = bits & ((1u << spec_.manBits) - 1);
    const bool expOnes = e == (1u << spec_.expBits) - 1;
    double v;
    if (spec_.ieee && expOnes) {
      v = m != 0 ? NAN : INFINITY;
    } else if (!spec_.ieee && expOnes && m == (1u << spec_.manBits) - 1) {
      v = NAN;
    } else if (e == 0) {
      v = std::ldexp(static_cast<double>(m), 1 - bias_ - spec_.manBits);
    } else {
      v = std::ldexp(static_cast<double>(m + (1u << spec_.manBits)),
                     static_cast<int>(e) - bias_ - spec_.manBits);
    }
    return negative ? -v : v;
  }

  bool isNan(uint32_t bits) const { return std::isnan(decode(bits)); }

  /// v rounded to the format's values: nearest, ties to even, then the
  /// format's overflow rule. NaN stays NaN.
  double round(double v) const {
    if (std::isnan(v)) return v;
    double a = std::fabs(v);
    if (!std::isinf(a) && a != 0) {
      int e = 0;
      std::frexp(a, &e);  // a = f * 2^e with f in [0.5, 1): the unit exponent is e - 1
      const int unitExp = std::max(e - 1, 1 - bias_) - spec_.manBits;
      a = std::ldexp(std::nearbyint(std::ldexp(a, -unitExp)), unitExp);
    }
    if (a > maxFinite()) a = spec_.saturate ? maxFinite() : INFINITY;
    return std::copysign(a, v);
  }

  /// The bits of a value the format holds (any NaN for NaN).
  uint32_t encode(double v) const {
    const uint32_t sign = std::signbit(v) ? signBit_ : 0;
    if (std::isnan(v)) return sign | (signBit_ - 1);  // all ones: NaN in every format here
    const double a = std::fabs(v);
    if (std::isinf(a)) return sign | (maxCode_ + 1);  // IEEE infinity
    auto it = std::lower_bound(values_.begin(), values_.end(), a);
    return sign | static_cast<uint32_t>(it - values_.begin());
  }

  uint32_t roundBits(double v) const { return encode(round(v)); }

 private:
  FormatSpec spec_;
  int bias_ = 0;
  uint32_t signBit_ = 0;
  uint32_t maxCode_ = 0;
  std::vector<double> values_;  ///< by code, 0 .. maxCode_: increasing
};

}  // namespace braid::reference
