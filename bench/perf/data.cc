// Inputs and expected outputs of braid-perf's checks (see data.h).
//
// Exactness. Integer types wrap, deterministically, so any inputs do. A
// floating type holds every integer up to a bound B exactly (float16 2048,
// bfloat16 256, e4m3 16, e5m2 8, float 2^24, double 2^53); a sum of n
// integers of magnitude at most m is then exact in any order while n * m <= B,
// because every partial sum is an integer within B. Sums use m = 8 where that
// fits, else m = B / n, else (more ranks than B) m = 1 with at most B ranks
// contributing a nonzero value to each element. Products use {-1, 1, 2}
// (powers of two, exact) and {-1, 1} in the narrow types, whose range is
// small. avg inputs differ on every rank, yet their mean is an integer: rank r
// holds w + d and rank n-1-r holds w - d (the middle rank of an odd n holds w),
// so the sum is n * w, exact when n * (|w| + |d|) <= B, and sum / n is w
// exactly; an avg that returned a rank's own input would be wrong on every
// rank but that middle one. With more ranks than B the inputs are 0. max and
// min are exact for any inputs.
#include "perf/data.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "perf/narrow_float.h"

namespace braid::perf {
namespace {

uint64_t mix(int rank, size_t i, uint64_t seed) {
  uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^
               (static_cast<uint64_t>(rank) + seed) * 0xC2B2AE3D27D4EB4Full;
  return h ^ (h >> 29);
}

// An integer in [-m, m] from h.
int64_t within(uint64_t h, int64_t m) { return static_cast<int64_t>(h % (2 * m + 1)) - m; }

// B above: every integer of magnitude up to it is exact in the type; 0 for
// the integer types, which wrap instead.
int64_t exactBound(ncclDataType_t type) {
  switch (type) {
    case ncclFloat16:
      return 2048;
    case ncclBfloat16:
      return 256;
    case ncclFloat8e4m3:
      return 16;
    case ncclFloat8e5m2:
      return 8;
    case ncclFloat32:
      return int64_t{1} << 24;
    case ncclFloat64:
      return int64_t{1} << 53;
    default:
      return 0;
  }
}

bool isNarrowFloat(ncclDataType_t type) {
  return type == ncclFloat16 || type == ncclBfloat16 || type == ncclFloat8e4m3 ||
         type == ncclFloat8e5m2;
}

int64_t sumInput(const Inputs& in, int rank, size_t i, uint64_t h) {
  const int64_t bound = exactBound(in.type);
  if (bound == 0 || 8 * static_cast<int64_t>(in.nranks) <= bound) return within(h, 8);
  if (in.nranks <= bound) return within(h, bound / in.nranks);
  // Element i takes nonzero values from ranks r with (r + i) % groups == 0:
  // at most ceil(nranks / groups) <= bound of them.
  const int64_t groups = (in.nranks + bound - 1) / bound;
  return (static_cast<int64_t>(i) + rank) % groups == 0 ? within(h, 1) : 0;
}

// Rank `rank`'s input at element i, as an integer.
int64_t inputValue(const Inputs& in, int rank, size_t i) {
  const uint64_t h = mix(rank, i, in.seed);
  if (!in.reduces) return within(h, 8);
  switch (in.op) {
    case ncclSum:
      return sumInput(in, rank, i, h);
    case ncclProd: {
      if (isNarrowFloat(in.type)) return (h & 1) != 0 ? 1 : -1;
      static const int64_t kValues[] = {-1, 1, 2, 1};
      return kValues[h & 3];
    }
    case ncclAvg: {
      const int64_t bound = exactBound(in.type);
      const int64_t m = bound == 0 ? 8 : std::min<int64_t>(8, bound / in.nranks);
      const int partner = in.nranks - 1 - rank;
      if (m == 0) return 0;
      const int64_t mean = within(mix(-1, i, in.seed), m / 2);
      if (partner == rank) return mean;
      // The pair's offset, drawn from the lower rank of the two so both draw the same.
      const int64_t offset = within(mix(std::min(rank, partner), i, in.seed), m - m / 2);
      return rank < partner ? mean + offset : mean - offset;
    }
    default:  // max, min
      return within(h, 8);
  }
}

// How each element type is stored and read back.
template <typename T>
struct Native {
  using Store = T;
  static constexpr bool kInteger = std::is_integral<T>::value;
  // Unsigned types take the magnitude, so that max and min see varied values.
  static Store fromInt(int64_t v) {
    if (std::is_unsigned<T>::value && v < 0) v = -v;
    return static_cast<Store>(v);
  }
  static Store fromDouble(double v) { return static_cast<Store>(v); }
  static double toDouble(Store s) { return static_cast<double>(s); }
};

// The narrow types through tables made once: the data are small integers, and
// narrowFromDouble's frexp and ldexp per element made filling and checking a 64 MiB buffer of
// a 16-bit type take seconds, several times the collective it checks. Values outside the
// table (avg's quotients) still go through narrowFromDouble.
template <NarrowFormat kFormat, typename Bits>
struct Narrow {
  using Store = Bits;
  static constexpr bool kInteger = false;
  static constexpr int64_t kIntRange = 1024;  ///< fromInt's table: -kIntRange .. kIntRange

  static Store fromInt(int64_t v) {
    static const std::vector<Store> ints = [] {
      std::vector<Store> codes;
      for (int64_t i = -kIntRange; i <= kIntRange; ++i) {
        codes.push_back(static_cast<Store>(narrowFromDouble(static_cast<double>(i), kFormat)));
      }
      return codes;
    }();
    if (v < -kIntRange || v > kIntRange) return fromDouble(static_cast<double>(v));
    return ints[static_cast<size_t>(v + kIntRange)];
  }
  static Store fromDouble(double v) {
    // A whole number in the table, but not -0, which the table's 0 is not.
    const bool inTable = std::fabs(v) <= static_cast<double>(kIntRange) && v == std::trunc(v) &&
                         !(v == 0 && std::signbit(v));
    if (inTable) return fromInt(static_cast<int64_t>(v));
    return static_cast<Store>(narrowFromDouble(v, kFormat));
  }
  static double toDouble(Store s) {
    static const std::vector<double> values = [] {
      std::vector<double> all(size_t{1} << (8 * sizeof(Store)));
      for (size_t code = 0; code < all.size(); ++code) {
        all[code] = narrowToDouble(static_cast<uint32_t>(code), kFormat);
      }
      return all;
    }();
    return values[s];
  }
};

// Integer arithmetic wraps, as NCCL's does: it is done on the unsigned type.
template <typename T>
T combineInt(T a, T b, ncclRedOp_t op) {
  using W = std::make_unsigned_t<T>;
  switch (op) {
    case ncclProd:
      return static_cast<T>(static_cast<W>(static_cast<W>(a) * static_cast<W>(b)));
    case ncclMax:
      return a < b ? b : a;
    case ncclMin:
      return b < a ? b : a;
    default:  // sum, avg
      return static_cast<T>(static_cast<W>(static_cast<W>(a) + static_cast<W>(b)));
  }
}

double combineDouble(double a, double b, ncclRedOp_t op) {
  switch (op) {
    case ncclProd:
      return a * b;
    case ncclMax:
      return std::max(a, b);
    case ncclMin:
      return std::min(a, b);
    default:  // sum, avg
      return a + b;
  }
}

// The reduction over every rank's element i. Floating results are computed in
// double, exactly (see the top of the file), and rounded to the type once.
template <typename C>
typename C::Store expectedReduce(const Inputs& in, size_t i) {
  using S = typename C::Store;
  if constexpr (C::kInteger) {
    S acc = C::fromInt(inputValue(in, 0, i));
    for (int r = 1; r < in.nranks; ++r)
      acc = combineInt(acc, C::fromInt(inputValue(in, r, i)), in.op);
    if (in.op != ncclAvg) return acc;
    // avg of integers: the wrapped sum divided, truncating toward zero.
    if (std::is_signed<S>::value) return static_cast<S>(static_cast<int64_t>(acc) / in.nranks);
    return static_cast<S>(static_cast<uint64_t>(acc) / static_cast<uint64_t>(in.nranks));
  } else {
    double acc = static_cast<double>(inputValue(in, 0, i));
    for (int r = 1; r < in.nranks; ++r) {
      acc = combineDouble(acc, static_cast<double>(inputValue(in, r, i)), in.op);
    }
    if (in.op == ncclAvg) acc /= in.nranks;
    return C::fromDouble(acc);
  }
}

// Equal values; for floating types by value, so that -0 equals +0 and NaN equals nothing.
template <typename C>
bool same(typename C::Store a, typename C::Store b) {
  if constexpr (C::kInteger) {
    return a == b;
  } else {
    return C::toDouble(a) == C::toDouble(b);
  }
}

// Calls visit(codec) with the codec of `type`, a value whose type names it.
template <typename Visit>
auto withCodec(ncclDataType_t type, Visit&& visit) {
  switch (type) {
    case ncclInt8:
      return visit(Native<int8_t>());
    case ncclUint8:
      return visit(Native<uint8_t>());
    case ncclInt32:
      return visit(Native<int32_t>());
    case ncclUint32:
      return visit(Native<uint32_t>());
    case ncclInt64:
      return visit(Native<int64_t>());
    case ncclUint64:
      return visit(Native<uint64_t>());
    case ncclFloat16:
      return visit(Narrow<NarrowFormat::kFloat16, uint16_t>());
    case ncclFloat64:
      return visit(Native<double>());
    case ncclBfloat16:
      return visit(Narrow<NarrowFormat::kBfloat16, uint16_t>());
    case ncclFloat8e4m3:
      return visit(Narrow<NarrowFormat::kFloat8e4m3, uint8_t>());
    case ncclFloat8e5m2:
      return visit(Narrow<NarrowFormat::kFloat8e5m2, uint8_t>());
    default:
      return visit(Native<float>());
  }
}

}  // namespace

void fillInput(const Inputs& in, int rank, size_t firstIndex, void* buf, size_t count) {
  withCodec(in.type, [&](auto codec) {
    using C = decltype(codec);
    auto* out = static_cast<typename C::Store*>(buf);
    for (size_t k = 0; k < count; ++k) out[k] = C::fromInt(inputValue(in, rank, firstIndex + k));
  });
}

int64_t countWrongCopy(const Inputs& in, int srcRank, size_t srcIndex, const void* buf,
                       size_t count) {
  return withCodec(in.type, [&](auto codec) {
    using C = decltype(codec);
    const auto* got = static_cast<const typename C::Store*>(buf);
    int64_t wrong = 0;
    for (size_t k = 0; k < count; ++k) {
      if (!same<C>(got[k], C::fromInt(inputValue(in, srcRank, srcIndex + k)))) ++wrong;
    }
    return wrong;
  });
}

int64_t countWrongReduce(const Inputs& in, size_t srcIndex, const void* buf, size_t count) {
  return withCodec(in.type, [&](auto codec) {
    using C = decltype(codec);
    const auto* got = static_cast<const typename C::Store*>(buf);
    int64_t wrong = 0;
    for (size_t k = 0; k < count; ++k) {
      if (!same<C>(got[k], expectedReduce<C>(in, srcIndex + k))) ++wrong;
    }
    return wrong;
  });
}

}  // namespace braid::perf
