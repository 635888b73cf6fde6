// The element types and reduction semantics the collective matrix tests check braid against,
// written independently of braid's kernels: what each of NCCL's twelve datatypes holds, how to
// draw random inputs whose results mean something, and the expected result of reducing one
// element across ranks.
//
// The semantics are NCCL's. Integers wrap (the reference computes in uint64_t and keeps the low
// bits). Floats round to the element type at every step, in an order the library chooses, so a
// float result is compared with a reference in double (long double for float64) within the
// worst-case error of that many rounded steps; when every partial result in any order is exactly
// representable (small values on a coarse grid) the result must be exact, which the reference
// detects and then demands. avg is the sum divided once by the rank count (integers: C division of
// the wrapped sum); premulsum is the sum of each rank's input times its scalar, rounded to the
// type; max and min are exact for every type. The narrow float formats come from
// tests/unit/float_reference.h, which shares no code with kernels/float_types.h.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "nccl.h"
#include "unit/float_reference.h"

namespace braid::testing::matrix {

/// The most ranks a reference reduces over (the matrix goes up to 8).
inline constexpr int kMaxRanks = 16;

enum class Kind { kSigned, kUnsigned, kFloat32, kFloat64, kNarrow };

/// One of NCCL's datatypes as the reference sees it. Elements are handled as raw bits (the low
/// `bytes * 8` bits of a uint64_t, little-endian in memory) and, for floats, their values.
struct TypeInfo {
  ncclDataType_t type = ncclInt8;
  const char* name = "";
  size_t bytes = 1;
  Kind kind = Kind::kSigned;
  int precision = 0;        ///< floats: significand bits, the implicit one included
  double minSubnormal = 0;  ///< floats: the smallest positive value
  double maxFinite = 0;     ///< floats: the largest finite value
  std::unique_ptr<reference::FormatModel> model;  ///< narrow floats only
  std::vector<double> table;                      ///< narrow floats only: the value of each code

  bool isFloat() const { return kind != Kind::kSigned && kind != Kind::kUnsigned; }
  uint64_t mask() const { return bytes == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * bytes)) - 1; }
  uint64_t load(const unsigned char* p) const {
    // Fixed-size copies compile to one load each; this runs for every element checked.
    switch (bytes) {
      case 1:
        return *p;
      case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
      }
      case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
      }
      default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
      }
    }
  }
  void store(unsigned char* p, uint64_t bits) const {
    switch (bytes) {
      case 1:
        *p = static_cast<unsigned char>(bits);
        break;
      case 2: {
        const uint16_t v = static_cast<uint16_t>(bits);
        memcpy(p, &v, 2);
        break;
      }
      case 4: {
        const uint32_t v = static_cast<uint32_t>(bits);
        memcpy(p, &v, 4);
        break;
      }
      default:
        memcpy(p, &bits, 8);
        break;
    }
  }
  int64_t signedValue(uint64_t bits) const {
    const int shift = 64 - 8 * static_cast<int>(bytes);
    return static_cast<int64_t>(bits << shift) >> shift;
  }
  /// The value of a float's bits.
  double value(uint64_t bits) const {
    if (kind == Kind::kFloat32) {
      float f;
      const uint32_t b = static_cast<uint32_t>(bits);
      memcpy(&f, &b, 4);
      return f;
    }
    if (kind == Kind::kFloat64) {
      double d;
      memcpy(&d, &bits, 8);
      return d;
    }
    return table[bits & mask()];
  }
  /// v rounded to the type: nearest, ties to even, then the type's overflow rule.
  double round(double v) const {
    if (kind == Kind::kFloat32) return static_cast<float>(v);
    if (kind == Kind::kFloat64) return v;
    return model->round(v);
  }
  /// The bits of a value the type holds.
  uint64_t encode(double v) const {
    if (kind == Kind::kFloat32) {
      const float f = static_cast<float>(v);
      uint32_t b;
      memcpy(&b, &f, 4);
      return b;
    }
    if (kind == Kind::kFloat64) {
      uint64_t b;
      memcpy(&b, &v, 8);
      return b;
    }
    return model->encode(v);
  }
};

inline std::unique_ptr<TypeInfo> makeInt(ncclDataType_t t, const char* name, size_t bytes,
                                         bool isSigned) {
  auto info = std::make_unique<TypeInfo>();
  info->type = t;
  info->name = name;
  info->bytes = bytes;
  info->kind = isSigned ? Kind::kSigned : Kind::kUnsigned;
  return info;
}

inline std::unique_ptr<TypeInfo> makeFloat(ncclDataType_t t, const char* name, size_t bytes,
                                           Kind kind, int precision, double minSubnormal,
                                           double maxFinite) {
  auto info = std::make_unique<TypeInfo>();
  info->type = t;
  info->name = name;
  info->bytes = bytes;
  info->kind = kind;
  info->precision = precision;
  info->minSubnormal = minSubnormal;
  info->maxFinite = maxFinite;
  return info;
}

inline std::unique_ptr<TypeInfo> makeNarrow(ncclDataType_t t, const char* name, size_t bytes,
                                            reference::FormatSpec spec) {
  auto info = std::make_unique<TypeInfo>();
  info->type = t;
  info->name = name;
  info->bytes = bytes;
  info->kind = Kind::kNarrow;
  info->precision = spec.manBits + 1;
  info->model = std::make_unique<reference::FormatModel>(spec);
  info->minSubnormal = info->model->decode(1);
  info->maxFinite = info->model->maxFinite();
  const uint32_t codes = uint32_t{1} << (8 * bytes);
  info->table.resize(codes);
  for (uint32_t c = 0; c < codes; ++c) info->table[c] = info->model->decode(c);
  return info;
}

/// Every datatype of nccl.h, indexed by its value.
inline const std::vector<std::unique_ptr<TypeInfo>>& typeTable() {
  static const std::vector<std::unique_ptr<TypeInfo>> table = [] {
    std::vector<std::unique_ptr<TypeInfo>> t;
    t.push_back(makeInt(ncclInt8, "int8", 1, true));
    t.push_back(makeInt(ncclUint8, "uint8", 1, false));
    t.push_back(makeInt(ncclInt32, "int32", 4, true));
    t.push_back(makeInt(ncclUint32, "uint32", 4, false));
    t.push_back(makeInt(ncclInt64, "int64", 8, true));
    t.push_back(makeInt(ncclUint64, "uint64", 8, false));
    t.push_back(makeNarrow(ncclFloat16, "float16", 2, reference::kHalfSpec));
    t.push_back(makeFloat(ncclFloat32, "float32", 4, Kind::kFloat32, 24, std::ldexp(1.0, -149),
                          3.4028234663852886e38));
    t.push_back(makeFloat(ncclFloat64, "float64", 8, Kind::kFloat64, 53, std::ldexp(1.0, -1074),
                          1.7976931348623157e308));
    t.push_back(makeNarrow(ncclBfloat16, "bfloat16", 2, reference::kBfloat16Spec));
    t.push_back(makeNarrow(ncclFloat8e4m3, "fp8e4m3", 1, reference::kE4m3Spec));
    t.push_back(makeNarrow(ncclFloat8e5m2, "fp8e5m2", 1, reference::kE5m2Spec));
    return t;
  }();
  return table;
}

inline const TypeInfo& typeInfo(ncclDataType_t t) { return *typeTable()[static_cast<int>(t)]; }

/// The operators under test: NCCL's five built-in ones and premulsum with either residence of
/// its scalar (HostImmediate: read when the op is made; Device: read through the pointer when
/// the collective runs).
enum class Op { kSum, kProd, kMax, kMin, kAvg, kPreMulHost, kPreMulDevice };

inline constexpr Op kAllOps[] = {Op::kSum, Op::kProd,       Op::kMax,         Op::kMin,
                                 Op::kAvg, Op::kPreMulHost, Op::kPreMulDevice};

inline const char* opName(Op op) {
  static const char* const kNames[] = {
      "sum", "prod", "max", "min", "avg", "premulsum_host", "premulsum_device"};
  return kNames[static_cast<int>(op)];
}

/// Lets gtest print an Op parameter by name.
inline void PrintTo(Op op, std::ostream* os) { *os << opName(op); }

inline bool isPreMul(Op op) { return op == Op::kPreMulHost || op == Op::kPreMulDevice; }

/// A built-in op's ncclRedOp_t (premulsum ops are made per communicator).
inline ncclRedOp_t builtinOp(Op op) {
  switch (op) {
    case Op::kSum:
      return ncclSum;
    case Op::kProd:
      return ncclProd;
    case Op::kMax:
      return ncclMax;
    case Op::kMin:
      return ncclMin;
    default:
      return ncclAvg;
  }
}

/// SplitMix64 as a generator: a few instructions a draw, which matters for the tens of millions
/// of elements of the large cases, and plenty random for test data.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t operator()() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

/// Derives an independent, repeatable seed from a seed and a number.
inline uint64_t mixSeed(uint64_t seed, uint64_t n) {
  return Rng(seed ^ (n * 0xd1b54a32d192ed03ull))();
}

/// The run's seed: BRAID_TEST_SEED when set, else a random one, printed once.
inline uint64_t testSeed() {
  static const uint64_t seed = [] {
    const char* s = getenv("BRAID_TEST_SEED");
    const uint64_t v = s ? strtoull(s, nullptr, 0) : std::random_device{}();
    printf("[ braid ] collective matrix seed %llu (set BRAID_TEST_SEED to repeat)\n",
           static_cast<unsigned long long>(v));
    return v;
  }();
  return seed;
}

/// Fills `bytes` bytes at `out` with random bytes.
inline void randomBytes(Rng& rng, unsigned char* out, size_t bytes) {
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    const uint64_t v = rng();
    memcpy(out + i, &v, 8);
  }
  if (i < bytes) {
    const uint64_t v = rng();
    memcpy(out + i, &v, bytes - i);
  }
}

/// Uniform in [0, 1).
inline double uniform01(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1p-53; }

/// An integer uniform in [lo, hi].
inline int64_t uniformInt(Rng& rng, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

/// A random finite value of a float type: every finite bit pattern is equally likely, so the
/// draw covers subnormals, both zeros and the extremes.
inline uint64_t randomFiniteBits(const TypeInfo& t, Rng& rng) {
  for (;;) {
    const uint64_t bits = rng() & t.mask();
    if (std::isfinite(t.value(bits))) return bits;
  }
}

/// Codes of the narrow formats' values that the random draws use, so that a draw is a table
/// look-up (FormatModel::encode searches). Built once per type.
struct NarrowCodes {
  std::vector<uint64_t> quarters;  ///< k / 4 for k = 0 .. 2^precision
  std::vector<uint64_t> nearOne;   ///< k / 2^(precision - 1), k = 3/4 .. 3/2 of 2^(precision - 1)
  uint64_t powersOfTwo[3] = {};    ///< 0.5, 1, 2
  uint64_t signBit = 0;
};

inline const NarrowCodes& narrowCodes(const TypeInfo& t) {
  static const std::vector<NarrowCodes> codes = [] {
    std::vector<NarrowCodes> all(typeTable().size());
    for (const auto& info : typeTable()) {
      if (info->kind != Kind::kNarrow) continue;
      NarrowCodes& c = all[static_cast<int>(info->type)];
      const int64_t full = int64_t{1} << info->precision, half = full / 2;
      for (int64_t k = 0; k <= full; ++k) c.quarters.push_back(info->encode(std::ldexp(k, -2)));
      for (int64_t k = half * 3 / 4; k <= half * 3 / 2; ++k) {
        c.nearOne.push_back(info->encode(std::ldexp(k, 1 - info->precision)));
      }
      for (int e = -1; e <= 1; ++e) c.powersOfTwo[e + 1] = info->encode(std::ldexp(1.0, e));
      c.signBit = info->model->signBit();
    }
    return all;
  }();
  return codes[static_cast<int>(t.type)];
}

inline uint64_t withRandomSign(const NarrowCodes& c, uint64_t code, Rng& rng) {
  return (rng() & 1) ? code | c.signBit : code;
}

/// A float in ±[0.75, 1.5] that the type holds exactly.
inline uint64_t nearOne(const TypeInfo& t, Rng& rng) {
  if (t.kind != Kind::kNarrow) {
    return t.encode(t.round((rng() & 1 ? -1 : 1) * (0.75 + 0.75 * uniform01(rng))));
  }
  const NarrowCodes& c = narrowCodes(t);
  return withRandomSign(c, c.nearOne[rng() % c.nearOne.size()], rng);
}

/// One random element at reduction index `index` (its parity picks between two draws, so that
/// every case has both exact and rounded elements). The ranges keep results finite and
/// meaningful: sums of the narrow floats stay far from saturation, products stay near 1.
inline uint64_t randomElement(const TypeInfo& t, Op op, int nranks, size_t index, Rng& rng) {
  const bool even = index % 2 == 0;
  if (!t.isFloat()) {
    // Integers: any bits (so sums and products wrap), but half the factors of a product small,
    // so that products are not almost always zero after wrapping.
    if (op == Op::kProd && !even) return static_cast<uint64_t>(uniformInt(rng, -4, 4)) & t.mask();
    return rng() & t.mask();
  }
  if (op == Op::kMax || op == Op::kMin) return randomFiniteBits(t, rng);
  if (t.kind != Kind::kNarrow) {
    if (op == Op::kProd)
      return t.encode(t.round((rng() & 1 ? -1 : 1) * (0.5 + 1.5 * uniform01(rng))));
    return t.encode(t.round(200 * uniform01(rng) - 100));
  }
  const NarrowCodes& c = narrowCodes(t);
  if (op == Op::kProd) {
    // Powers of two: their products are exact, and must come back exact.
    return even ? withRandomSign(c, c.powersOfTwo[rng() % 3], rng) : nearOne(t, rng);
  }
  // Narrow sums: quarters k / 4 with |k| <= 2^precision, all held exactly. Even elements keep
  // |k| <= 2^precision / nranks, so every partial sum is exact as well.
  const uint64_t limit = std::max<uint64_t>(1, (uint64_t{1} << t.precision) / (even ? nranks : 1));
  return withRandomSign(c, c.quarters[rng() % (limit + 1)], rng);
}

/// A premulsum scalar: any bits for integers, ±[0.75, 1.5] for floats.
inline uint64_t randomScalar(const TypeInfo& t, Rng& rng) {
  return t.isFloat() ? nearOne(t, rng) : rng() & t.mask();
}

/// The expected result of one element: exact bits for integers; a value and a tolerance for
/// floats (tolerance 0: the value exactly).
struct Expected {
  uint64_t bits = 0;
  long double value = 0;
  long double tol = 0;
};

/// The weight of the lowest set bit of a nonzero finite double, as an exponent of two.
inline int lowestBitExponent(double v) {
  uint64_t bits;
  memcpy(&bits, &v, 8);
  const int exponent = static_cast<int>((bits >> 52) & 0x7ff);
  uint64_t mantissa = bits & ((uint64_t{1} << 52) - 1);
  if (exponent != 0) mantissa |= uint64_t{1} << 52;
  return std::max(exponent, 1) - 1075 + __builtin_ctzll(mantissa);
}

/// 2^e, built from its bits where double holds it (ldexp is a library call, and this runs for
/// every element of the large cases).
inline long double powerOfTwo(int e) {
  if (e < -1022 || e > 1023) return std::ldexp(1.0L, e);
  const uint64_t bits = static_cast<uint64_t>(e + 1023) << 52;
  double d;
  memcpy(&d, &bits, 8);
  return d;
}

/// Whether a nonzero finite double is a power of two.
inline bool isPowerOfTwo(double v) {
  uint64_t bits;
  memcpy(&bits, &v, 8);
  return (bits & ((uint64_t{1} << 52) - 1)) == 0 && ((bits >> 52) & 0x7ff) != 0;
}

/// Reduces one element across ranks the way NCCL defines each op (see the top of this file),
/// with the error bounds of the rounded steps worked out once per case.
class Reducer {
 public:
  Reducer(const TypeInfo& t, Op op, int nranks, const uint64_t* scalars)
      : t_(t), op_(op), n_(nranks), scalars_(scalars) {
    const long double u = std::ldexp(1.0L, -std::max(t.precision, 1));
    long double grow = 1;  // (1 + u)^k
    for (int k = 1; k <= nranks + 2; ++k) {
      grow *= 1 + u;
      // Each of the n - 1 additions errs by u times a partial sum, which is at most (1 + u)^k
      // times the magnitude: sum_k u (1 + u)^k = (1 + u)^n - 1 - u.
      if (k == nranks) sumFactor_ = grow - 1 - u;
      if (k == nranks - 1) prodFactor_ = grow - 1;
      // Either way of averaging (the sum divided once, as braid does, or each input scaled by
      // a rounded 1/n and then summed, as NCCL does for floats) is within n + 2 roundings.
      if (k == nranks + 2) avgFactor_ = (grow - 1) / nranks;
    }
    if (t.isFloat()) {
      for (int r = 0; r < nranks; ++r) scalarValues_[r] = t.value(scalars[r]);
    }
  }

  /// The expected result; elems[r] points at rank r's element.
  Expected operator()(const unsigned char* const* elems) const {
    if (!t_.isFloat()) return integer(elems);
    double v[kMaxRanks] = {};
    for (int r = 0; r < n_; ++r) {
      const double x = t_.value(t_.load(elems[r]));
      // The product of two type values is exact in double except for float64, where double's
      // rounding is float64's own: either way t.round gives NCCL's rounded pre-multiplication.
      v[r] = isPreMul(op_) ? t_.round(scalarValues_[r] * x) : x;
    }
    const bool wide = t_.kind == Kind::kFloat64;
    switch (op_) {
      case Op::kProd:
        return wide ? prod<long double>(v) : prod<double>(v);
      case Op::kMax:
      case Op::kMin: {
        Expected e;
        double best = v[0];
        for (int r = 1; r < n_; ++r)
          best = op_ == Op::kMax ? std::max(best, v[r]) : std::min(best, v[r]);
        e.value = best;
        return e;
      }
      case Op::kAvg:
        return wide ? avg<long double>(v) : avg<double>(v);
      default:
        return wide ? sum<long double>(v) : sum<double>(v);
    }
  }

 private:
  Expected integer(const unsigned char* const* elems) const {
    const uint64_t m = t_.mask();
    uint64_t acc = t_.load(elems[0]);
    if (isPreMul(op_)) acc *= scalars_[0];
    for (int r = 1; r < n_; ++r) {
      const uint64_t x = t_.load(elems[r]);
      switch (op_) {
        case Op::kProd:
          acc *= x;
          break;
        case Op::kMax:
        case Op::kMin: {
          const bool less =
              t_.kind == Kind::kSigned ? t_.signedValue(acc) < t_.signedValue(x) : (acc & m) < x;
          if (less == (op_ == Op::kMax)) acc = x;
          break;
        }
        case Op::kPreMulHost:
        case Op::kPreMulDevice:
          acc += x * scalars_[r];
          break;
        default:
          acc += x;
          break;
      }
    }
    acc &= m;
    if (op_ == Op::kAvg) {
      acc = t_.kind == Kind::kSigned ? static_cast<uint64_t>(t_.signedValue(acc) / n_) : acc / n_;
    }
    Expected e;
    e.bits = acc & m;
    return e;
  }

  /// The exact sum, and the worst-case error of n - 1 rounded additions in any order, or 0 when
  /// every partial sum in any order is representable (all are multiples of the lowest bit of
  /// any term and at most the sum of magnitudes). `A` accumulates: double holds the sum of up
  /// to kMaxRanks values of 24 significant bits within far less than the tolerance (and exactly
  /// when the exact condition holds); float64 needs long double.
  template <typename A>
  Expected sum(const double* v) const {
    A total = 0, magnitude = 0;
    int lowest = INT32_MAX;
    for (int r = 0; r < n_; ++r) {
      total += v[r];
      magnitude += std::fabs(v[r]);
      if (v[r] != 0) lowest = std::min(lowest, lowestBitExponent(v[r]));
    }
    Expected e;
    e.value = total;
    const bool exact = lowest == INT32_MAX || (magnitude <= powerOfTwo(t_.precision + lowest) &&
                                               magnitude <= t_.maxFinite);
    // The reference's own rounding (at most 2^-52 of the magnitude, either accumulator) and
    // the subnormal range's absolute steps come on top of the bound.
    if (!exact) {
      e.tol = sumFactor_ * magnitude + magnitude * 0x1p-50L + n_ * t_.minSubnormal;
    }
    return e;
  }

  template <typename A>
  Expected avg(const double* v) const {
    A magnitude = 0;
    for (int r = 0; r < n_; ++r) magnitude += std::fabs(v[r]);
    Expected e = sum<A>(v);
    e.value /= n_;
    e.tol = avgFactor_ * magnitude + magnitude * 0x1p-50L + (n_ + 2) * t_.minSubnormal;
    return e;
  }

  template <typename A>
  Expected prod(const double* v) const {
    A total = 1, above = 1, below = 1;
    bool powersOfTwo = true;
    for (int r = 0; r < n_; ++r) {
      total *= v[r];
      const double a = std::fabs(v[r]);
      if (a != 0 && !isPowerOfTwo(a)) powersOfTwo = false;
      if (a > 1) above *= a;
      if (a < 1 && a != 0) below *= a;
    }
    Expected e;
    e.value = total;
    if (total == 0) return e;  // a zero factor makes every order exactly zero
    // Powers of two multiply exactly while every partial product stays in range.
    if (powersOfTwo && above <= t_.maxFinite && below >= t_.minSubnormal) return e;
    e.tol = prodFactor_ * std::fabs(e.value) + std::fabs(e.value) * 0x1p-50L;
    return e;
  }

  const TypeInfo& t_;
  Op op_;
  int n_;
  const uint64_t* scalars_;
  double scalarValues_[kMaxRanks] = {};
  long double sumFactor_ = 0, prodFactor_ = 0, avgFactor_ = 0;
};

/// Whether `got` (bits) is the expected result.
inline bool matches(const TypeInfo& t, const Expected& e, uint64_t got) {
  if (!t.isFloat()) return (got & t.mask()) == e.bits;
  const double value = t.value(got);
  if (std::isnan(value)) return false;
  if (e.tol == 0) return value == e.value;
  return std::fabs(value - e.value) <= e.tol;
}

/// "got <value> (0x<bits>), expected <value> +- <tol>".
inline std::string describeMismatch(const TypeInfo& t, const Expected& e, uint64_t got) {
  char text[256];
  if (!t.isFloat()) {
    snprintf(text, sizeof text, "got 0x%llx, expected 0x%llx",
             static_cast<unsigned long long>(got & t.mask()),
             static_cast<unsigned long long>(e.bits));
  } else {
    snprintf(text, sizeof text, "got %.17g (0x%llx), expected %.17Lg +- %.3Lg", t.value(got),
             static_cast<unsigned long long>(got & t.mask()), e.value, e.tol);
  }
  return text;
}

}  // namespace braid::testing::matrix
