// float16, bfloat16 and fp8 conversions for braid-perf's data (see narrow_float.h).
//
// Every format here is sign, E exponent bits (bias 2^(E-1) - 1) and M stored
// mantissa bits. A magnitude is a whole number of "units" of its binade: in
// the binade with exponent e (or the subnormal range, which shares the units
// of the smallest normal binade) one unit is 2^(e - M). With minExp the
// exponent of the smallest normal binade, the code of units u at exponent e
// is (e - minExp) * 2^M + u: subnormals (e = minExp, u < 2^M) are their units,
// and a carry of the rounding into the next binade lands on its code.
#include "perf/narrow_float.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace braid::perf {
namespace {

struct Layout {
  int expBits;
  int manBits;
  bool ieeeSpecials;  ///< all-ones exponent is inf/NaN; else only all-ones is NaN (e4m3)
  bool saturate;      ///< overflow gives the largest finite value, not infinity
};

Layout layoutOf(NarrowFormat format) {
  switch (format) {
    case NarrowFormat::kFloat16:
      return {5, 10, true, false};
    case NarrowFormat::kBfloat16:
      return {8, 7, true, false};
    case NarrowFormat::kFloat8e4m3:
      return {4, 3, false, true};
    default:
      return {5, 2, true, true};
  }
}

struct Codes {
  uint32_t signBit;
  uint32_t infinity;  ///< meaningful with ieeeSpecials only
  uint32_t nan;
  uint32_t maxFinite;
  int bias;
  int minExp;  ///< exponent of the smallest normal binade
};

Codes codesOf(const Layout& l) {
  Codes c;
  c.signBit = 1u << (l.expBits + l.manBits);
  const uint32_t allOnesExp = ((1u << l.expBits) - 1) << l.manBits;
  c.infinity = allOnesExp;
  c.nan = l.ieeeSpecials ? allOnesExp | (1u << (l.manBits - 1)) : c.signBit - 1;
  c.maxFinite = l.ieeeSpecials ? allOnesExp - 1 : c.signBit - 2;
  c.bias = (1 << (l.expBits - 1)) - 1;
  c.minExp = 1 - c.bias;
  return c;
}

}  // namespace

uint32_t narrowFromDouble(double x, NarrowFormat format) {
  const Layout l = layoutOf(format);
  const Codes c = codesOf(l);
  const uint32_t sign = std::signbit(x) ? c.signBit : 0;
  if (std::isnan(x)) return sign | c.nan;
  const uint32_t overflow = l.saturate ? c.maxFinite : c.infinity;
  const double magnitude = std::fabs(x);
  if (std::isinf(magnitude)) return sign | overflow;
  if (magnitude == 0) return sign;
  int frexpExp = 0;
  std::frexp(magnitude, &frexpExp);  // magnitude = m * 2^frexpExp, m in [0.5, 1)
  const int exp = std::max(frexpExp - 1, c.minExp);
  // nearbyint rounds in the current mode, which is to nearest, ties to even.
  const double units = std::nearbyint(std::ldexp(magnitude, l.manBits - exp));
  const double code = std::ldexp(static_cast<double>(exp - c.minExp), l.manBits) + units;
  if (code > c.maxFinite) return sign | overflow;
  return sign | static_cast<uint32_t>(code);
}

double narrowToDouble(uint32_t bits, NarrowFormat format) {
  const Layout l = layoutOf(format);
  const Codes c = codesOf(l);
  const uint32_t magnitude = bits & (c.signBit - 1);
  const uint32_t expField = magnitude >> l.manBits;
  const uint32_t mantissa = magnitude & ((1u << l.manBits) - 1);
  double value;
  if (l.ieeeSpecials && expField == (1u << l.expBits) - 1) {
    value = mantissa != 0 ? std::numeric_limits<double>::quiet_NaN()
                          : std::numeric_limits<double>::infinity();
  } else if (!l.ieeeSpecials && magnitude == c.nan) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (expField == 0) {
    value = std::ldexp(static_cast<double>(mantissa), c.minExp - l.manBits);
  } else {
    const double units = static_cast<double>((1u << l.manBits) + mantissa);
    value = std::ldexp(units, static_cast<int>(expField) - c.bias - l.manBits);
  }
  return (bits & c.signBit) != 0 ? -value : value;
}

}  // namespace braid::perf
