// The host loops (kernels/host_reduce.h) for every (datatype, op) pair and
// every build of them this CPU runs (portable, AVX2, F16C, AVX-512), against a
// scalar reference written here: integers in 64-bit modular arithmetic, floats
// in double rounded to the element type (by float_reference.h's independent
// model for the 16- and 8-bit types). Lengths exercise vector bodies and
// tails of every step width (8 and 32 elements); aliasing (in-place),
// unaligned pointers, the two-destination form, premulsum's load and avg's
// finish are covered, and all builds must agree bit for bit, NaN payloads
// included. Buffers that end at an unmapped page show that no build reads or
// writes past the last element.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/float_types.h"
#include "kernels/host_fp8_avx512.h"
#include "kernels/host_narrow_avx512.h"
#include "kernels/host_narrow_simd.h"
#include "kernels/host_reduce.h"
#include "support/uniform_real.h"
#include "unit/float_reference.h"

namespace braid::kernels {
namespace {

const RedOp kAllOps[] = {RedOp::kSum, RedOp::kProd, RedOp::kMax,
                         RedOp::kMin, RedOp::kAvg,  RedOp::kPreMulSum};
// Around the 8-element steps of the AVX2 builds and the 32-element steps of
// the AVX-512 ones: empty, shorter than a step, whole steps, steps and a tail.
const size_t kLengths[] = {0, 1, 7, 15, 16, 31, 32, 33, 63, 95, 1000, 4099};

std::vector<HostIsa> supportedIsas() {
  std::vector<HostIsa> isas;
  for (HostIsa isa : kHostIsas) {
    if (hostIsaSupported(isa)) isas.push_back(isa);
  }
  return isas;
}

// ---- The reference arithmetic, one model per kind of element type ----------

/// Integers: sums and products modulo 2^bits, division truncating toward zero.
template <typename T>
struct IntModel {
  static T sum(T a, T b) {
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }
  static T prod(T a, T b) {
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  }
  static T max(T a, T b) { return a > b ? a : b; }
  static T min(T a, T b) { return a < b ? a : b; }
  static T div(T a, int n) {
    if constexpr (std::is_signed<T>::value) return static_cast<T>(static_cast<int64_t>(a) / n);
    return static_cast<T>(static_cast<uint64_t>(a) / static_cast<uint64_t>(n));
  }
  static bool isNan(T) { return false; }
  static T random(std::mt19937_64& rng) { return static_cast<T>(rng()); }
  static std::vector<T> scalars() { return {T(1), static_cast<T>(-3), T(7)}; }
};

/// Floating types: the exact operation in double, then one rounding to T.
/// For float and the narrow types, double is wide enough that rounding the
/// double result again gives the correctly rounded T (53 >= 2 * 24 + 2).
template <typename T, typename Codec>
struct FloatModel {
  static double d(T x) { return Codec::toDouble(x); }
  static T r(double v) { return Codec::fromDouble(v); }
  static T sum(T a, T b) { return r(d(a) + d(b)); }
  static T prod(T a, T b) { return r(d(a) * d(b)); }
  static T max(T a, T b) { return r(d(a) < d(b) ? d(b) : d(a)); }  // NaN in a wins
  static T min(T a, T b) { return r(d(b) < d(a) ? d(b) : d(a)); }
  static T div(T a, int n) { return r(d(a) / n); }
  static bool isNan(T x) { return std::isnan(d(x)); }
  static T random(std::mt19937_64& rng) { return Codec::random(rng); }
  static std::vector<T> scalars() { return {r(1.0), r(-2.0), r(0.5), r(3.0), r(0.1)}; }
};

template <typename T>
T randomNative(std::mt19937_64& rng) {
  // Mostly ordinary values, some of every special class.
  static const T kSpecial[] = {T(0),
                               -T(0),
                               std::numeric_limits<T>::infinity(),
                               -std::numeric_limits<T>::infinity(),
                               std::numeric_limits<T>::quiet_NaN(),
                               std::numeric_limits<T>::denorm_min(),
                               std::numeric_limits<T>::max(),
                               std::numeric_limits<T>::min()};
  if (rng() % 16 == 0) return kSpecial[rng() % 8];
  return static_cast<T>(braid::testing::uniformReal(rng, -1e3, 1e3));
}

struct FloatCodec {
  static double toDouble(float x) { return x; }
  static float fromDouble(double v) { return static_cast<float>(v); }
  static float random(std::mt19937_64& rng) { return randomNative<float>(rng); }
};
struct DoubleCodec {
  static double toDouble(double x) { return x; }
  static double fromDouble(double v) { return v; }
  static double random(std::mt19937_64& rng) { return randomNative<double>(rng); }
};

/// The narrow types through the independent format model; random inputs are
/// random bit patterns, so every class (NaN, infinity, subnormal) shows up.
template <typename T, const reference::FormatSpec& kSpec>
struct NarrowCodec {
  static const reference::FormatModel& model() {
    static const reference::FormatModel m(kSpec);
    return m;
  }
  static double toDouble(T x) { return model().decode(x.bits); }
  static T fromDouble(double v) { return T{static_cast<decltype(T{}.bits)>(model().roundBits(v))}; }
  static T random(std::mt19937_64& rng) { return T{static_cast<decltype(T{}.bits)>(rng())}; }
};

template <typename T>
struct ModelOf {
  using type = IntModel<T>;
};
template <>
struct ModelOf<float> {
  using type = FloatModel<float, FloatCodec>;
};
template <>
struct ModelOf<double> {
  using type = FloatModel<double, DoubleCodec>;
};
template <>
struct ModelOf<Float16> {
  using type = FloatModel<Float16, NarrowCodec<Float16, reference::kHalfSpec>>;
};
template <>
struct ModelOf<Bfloat16> {
  using type = FloatModel<Bfloat16, NarrowCodec<Bfloat16, reference::kBfloat16Spec>>;
};
template <>
struct ModelOf<Float8e4m3> {
  using type = FloatModel<Float8e4m3, NarrowCodec<Float8e4m3, reference::kE4m3Spec>>;
};
template <>
struct ModelOf<Float8e5m2> {
  using type = FloatModel<Float8e5m2, NarrowCodec<Float8e5m2, reference::kE5m2Spec>>;
};

// ---- Checking ----------------------------------------------------------------

/// Equal bits, or both NaN (the reference does not model NaN payloads; the
/// builds are compared with each other bit for bit instead).
template <typename T>
size_t countMismatches(const std::vector<T>& got, const std::vector<T>& want) {
  using M = typename ModelOf<T>::type;
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool same = memcmp(&got[i], &want[i], sizeof(T)) == 0;
    if (!same && !(M::isNan(got[i]) && M::isNan(want[i]))) ++bad;
  }
  return bad;
}

template <typename T>
T applyRef(RedOp op, T a, T b) {
  using M = typename ModelOf<T>::type;
  switch (op) {
    case RedOp::kProd:
      return M::prod(a, b);
    case RedOp::kMax:
      return M::max(a, b);
    case RedOp::kMin:
      return M::min(a, b);
    default:  // sum, avg (sum, then the finish), premulsum (sum of the loaded input)
      return M::sum(a, b);
  }
}

template <typename T>
std::vector<T> randomVector(size_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  for (T& x : v) x = ModelOf<T>::type::random(rng);
  return v;
}

/// The elements of `v` from `offset` on.
template <typename T>
std::vector<T> from(const std::vector<T>& v, size_t offset) {
  return std::vector<T>(v.begin() + offset, v.end());
}

/// reduce and reduce2 with every pointer a different number of elements past
/// an allocation's start, so that no two are aligned alike and none is
/// aligned to a vector.
template <typename T>
void checkUnaligned(const HostOp& h, const std::vector<T>& recv, const std::vector<T>& in,
                    const std::vector<T>& want) {
  const size_t n = want.size();
  std::vector<T> r(n + 3), x(n + 2), d(n + 1), d2(n + 5);
  std::copy(recv.begin(), recv.end(), r.begin() + 3);
  std::copy(in.begin(), in.end(), x.begin() + 2);
  h.reduce(h.args, d.data() + 1, r.data() + 3, x.data() + 2, n);
  EXPECT_EQ(countMismatches(from(d, 1), want), 0u) << "reduce, unaligned";
  std::fill(d.begin(), d.end(), T{});
  h.reduce2(h.args, d2.data() + 5, d.data() + 1, r.data() + 3, x.data() + 2, n);
  EXPECT_EQ(countMismatches(from(d, 1), want), 0u) << "reduce2, unaligned, first destination";
  EXPECT_EQ(countMismatches(from(d2, 5), want), 0u) << "reduce2, unaligned, second destination";
}

/// One (type, op, args) on every build: reduce, reduce2, both aliasings,
/// unaligned pointers, and load / finish where the operator has them.
template <typename T>
void checkOp(DataType type, RedOp op, const OpArgs& args, const T* scalar, std::mt19937_64& rng) {
  using M = typename ModelOf<T>::type;
  const std::string pair = std::string(dataTypeName(type)) + " " + redOpName(op);
  for (size_t n : kLengths) {
    const auto recv = randomVector<T>(n, rng);
    const auto in = randomVector<T>(n, rng);
    std::vector<T> loaded(in), want(n), finished(n);
    if (scalar != nullptr) {
      for (size_t i = 0; i < n; ++i) loaded[i] = M::prod(*scalar, in[i]);
    }
    for (size_t i = 0; i < n; ++i) want[i] = applyRef(op, recv[i], loaded[i]);
    for (size_t i = 0; i < n; ++i) finished[i] = M::div(recv[i], args.nranks);
    for (HostIsa isa : supportedIsas()) {
      SCOPED_TRACE(pair + " n=" + std::to_string(n) + " build=" + hostIsaName(isa));
      auto made = hostOp(type, op, args, isa);
      ASSERT_TRUE(made.ok()) << made.status().message();
      const HostOp& h = made.value();
      ASSERT_NE(h.reduce, nullptr);
      ASSERT_NE(h.reduce2, nullptr);
      EXPECT_EQ(h.load != nullptr, op == RedOp::kPreMulSum);
      EXPECT_EQ(h.finish != nullptr, op == RedOp::kAvg);

      std::vector<T> out(n), out2(n);
      h.reduce(h.args, out.data(), recv.data(), in.data(), n);
      EXPECT_EQ(countMismatches(out, want), 0u) << "reduce";
      std::fill(out.begin(), out.end(), T{});
      h.reduce2(h.args, out.data(), out2.data(), recv.data(), in.data(), n);
      EXPECT_EQ(countMismatches(out, want), 0u) << "reduce2, first destination";
      EXPECT_EQ(countMismatches(out2, want), 0u) << "reduce2, second destination";
      std::vector<T> inPlace(recv);
      h.reduce(h.args, inPlace.data(), inPlace.data(), in.data(), n);
      EXPECT_EQ(countMismatches(inPlace, want), 0u) << "reduce with dst == recv";
      inPlace = in;
      h.reduce(h.args, inPlace.data(), recv.data(), inPlace.data(), n);
      EXPECT_EQ(countMismatches(inPlace, want), 0u) << "reduce with dst == in";
      checkUnaligned(h, recv, in, want);

      std::vector<T> load(n);
      h.loadInput(load.data(), in.data(), n, sizeof(T));
      EXPECT_EQ(countMismatches(load, loaded), 0u) << "loadInput";
      if (op == RedOp::kAvg) {
        std::vector<T> buf(recv);
        h.finishOutput(buf.data(), n);
        EXPECT_EQ(countMismatches(buf, finished), 0u) << "finish with nranks " << args.nranks;
      }
    }
  }
}

template <typename T>
void checkType(DataType type) {
  using M = typename ModelOf<T>::type;
  std::mt19937_64 rng(42 + static_cast<int>(type));
  for (RedOp op : kAllOps) {
    if (op == RedOp::kPreMulSum) {
      for (T s : M::scalars()) {
        OpArgs args;
        args.setScalar(&s, sizeof s);
        checkOp<T>(type, op, args, &s, rng);
      }
    } else if (op == RedOp::kAvg) {
      for (int nranks : {1, 2, 3, 7, 200}) {
        OpArgs args;
        args.nranks = nranks;
        checkOp<T>(type, op, args, nullptr, rng);
      }
    } else {
      checkOp<T>(type, op, OpArgs{}, nullptr, rng);
    }
  }
}

TEST(HostReduce, IntegerTypesMatchReference) {
  checkType<int8_t>(DataType::kInt8);
  checkType<uint8_t>(DataType::kUint8);
  checkType<int32_t>(DataType::kInt32);
  checkType<uint32_t>(DataType::kUint32);
  checkType<int64_t>(DataType::kInt64);
  checkType<uint64_t>(DataType::kUint64);
}

TEST(HostReduce, FloatAndDoubleMatchReference) {
  checkType<float>(DataType::kFloat32);
  checkType<double>(DataType::kFloat64);
}

TEST(HostReduce, HalfAndBfloat16MatchReference) {
  checkType<Float16>(DataType::kFloat16);
  checkType<Bfloat16>(DataType::kBfloat16);
}

TEST(HostReduce, Fp8MatchesReference) {
  checkType<Float8e4m3>(DataType::kFloat8e4m3);
  checkType<Float8e5m2>(DataType::kFloat8e5m2);
}

/// Every build gives the portable build's bits, NaN payloads included: every
/// 16-bit (8-bit) pattern against random partners, through every operator.
/// The one freedom: when both operands are NaN, which payload survives is
/// left open by IEEE 754, and compilers swap the operands of commutative
/// vector operations, so then only NaN-ness must agree.
template <typename T>
void checkBuildsAgree(DataType type, size_t patterns) {
  using M = typename ModelOf<T>::type;
  std::vector<T> recv(patterns), in(patterns);
  std::mt19937_64 rng(5);
  for (size_t i = 0; i < patterns; ++i) {
    recv[i] = T{static_cast<decltype(T{}.bits)>(i)};
    in[i] = T{static_cast<decltype(T{}.bits)>(rng())};
  }
  OpArgs args;
  args.nranks = 3;
  const T scalar = T::fromFloat(-0.7f);
  args.setScalar(&scalar, sizeof scalar);
  for (RedOp op : kAllOps) {
    auto portable = hostOp(type, op, args, HostIsa::kPortable);
    ASSERT_TRUE(portable.ok());
    std::vector<T> want(patterns), wantFinish(recv), wantLoad(patterns);
    portable.value().reduce(args, want.data(), recv.data(), in.data(), patterns);
    portable.value().finishOutput(wantFinish.data(), patterns);
    portable.value().loadInput(wantLoad.data(), in.data(), patterns, sizeof(T));
    for (HostIsa isa : supportedIsas()) {
      SCOPED_TRACE(std::string(dataTypeName(type)) + " " + redOpName(op) + " " + hostIsaName(isa));
      auto h = hostOp(type, op, args, isa);
      ASSERT_TRUE(h.ok());
      std::vector<T> got(patterns), got2(patterns), got3(patterns), gotFinish(recv);
      std::vector<T> gotLoad(patterns);
      h.value().reduce(args, got.data(), recv.data(), in.data(), patterns);
      h.value().reduce2(args, got2.data(), got3.data(), recv.data(), in.data(), patterns);
      h.value().finishOutput(gotFinish.data(), patterns);
      h.value().loadInput(gotLoad.data(), in.data(), patterns, sizeof(T));
      size_t bad = 0;
      for (const std::vector<T>* result : {&got, &got2, &got3}) {
        for (size_t i = 0; i < patterns; ++i) {
          const T g = (*result)[i];
          if (g.bits == want[i].bits) continue;
          const bool bothNan = M::isNan(recv[i]) && M::isNan(in[i]);
          if (!(bothNan && M::isNan(g) && M::isNan(want[i]))) ++bad;
        }
      }
      EXPECT_EQ(bad, 0u);
      EXPECT_EQ(0, memcmp(gotFinish.data(), wantFinish.data(), patterns * sizeof(T)));
      EXPECT_EQ(0, memcmp(gotLoad.data(), wantLoad.data(), patterns * sizeof(T)));
    }
  }
}

TEST(HostReduce, EveryBuildGivesTheSameBits) {
  checkBuildsAgree<Float16>(DataType::kFloat16, 1 << 16);
  checkBuildsAgree<Bfloat16>(DataType::kBfloat16, 1 << 16);
  checkBuildsAgree<Float8e4m3>(DataType::kFloat8e4m3, 1 << 8);
  checkBuildsAgree<Float8e5m2>(DataType::kFloat8e5m2, 1 << 8);
}

/// Calls `run(offset, length)` over [0, total) in pieces of every length from 1 to 70, so that
/// the loops of every build run whole steps and every length of tail.
template <typename Run>
void inPieces(size_t total, Run run) {
  for (size_t i = 0, len = 1; i < total; i += len, len = len % 70 + 1) {
    run(i, std::min(len, total - i));
  }
}

/// fp8 exhaustively: every pair of codes (256 x 256) through every operator on every build,
/// in pieces (every tail), in place on either input and through reduce2, and the pre and
/// post of premulsum and avg on every code; all against the portable build, which runs the
/// scalar functors. Only when both operands are NaN may the NaN's sign or payload differ.
template <typename T>
void checkFp8Pairs(DataType type) {
  using M = typename ModelOf<T>::type;
  constexpr size_t kPairs = 256 * 256;
  std::vector<T> recv(kPairs), in(kPairs), codes(256);
  for (size_t i = 0; i < kPairs; ++i) {
    recv[i].bits = static_cast<uint8_t>(i >> 8);
    in[i].bits = static_cast<uint8_t>(i);
  }
  for (size_t i = 0; i < 256; ++i) codes[i].bits = static_cast<uint8_t>(i);
  // Which operand of a pair is NaN once premulsum's pre has scaled it.
  std::vector<T> loaded(codes);
  auto differences = [&](const std::vector<T>& got, const std::vector<T>& want) {
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i].bits == want[i].bits) continue;
      const bool nans = M::isNan(recv[i]) && M::isNan(loaded[in[i].bits]) && M::isNan(got[i]);
      if (!(nans && M::isNan(want[i]))) ++bad;
    }
    return bad;
  };
  for (RedOp op : kAllOps) {
    std::vector<OpArgs> variants(1);
    if (op == RedOp::kPreMulSum) {
      variants.clear();
      for (float f : {1.0f, -0.7f, 3.0f, 1e-3f, 448.0f, -INFINITY}) {
        const T s = T::fromFloat(f);
        variants.emplace_back().setScalar(&s, sizeof s);
      }
    } else if (op == RedOp::kAvg) {
      variants.clear();
      for (int n : {1, 2, 3, 7, 200}) variants.emplace_back().nranks = n;
    }
    for (const OpArgs& args : variants) {
      auto portable = hostOp(type, op, args, HostIsa::kPortable);
      ASSERT_TRUE(portable.ok());
      std::vector<T> want(kPairs), wantLoad(256), wantFinish(codes);
      portable.value().reduce(args, want.data(), recv.data(), in.data(), kPairs);
      portable.value().loadInput(wantLoad.data(), codes.data(), 256, sizeof(T));
      portable.value().finishOutput(wantFinish.data(), 256);
      loaded = wantLoad;
      for (HostIsa isa : supportedIsas()) {
        SCOPED_TRACE(std::string(dataTypeName(type)) + " " + redOpName(op) + " " +
                     hostIsaName(isa) + " scalar " + std::to_string(args.scalar[0]) + " nranks " +
                     std::to_string(args.nranks));
        auto made = hostOp(type, op, args, isa);
        ASSERT_TRUE(made.ok());
        const HostOp& h = made.value();
        std::vector<T> out(kPairs), out2(kPairs), onRecv(recv), onIn(in), load(256), fin(codes);
        inPieces(kPairs, [&](size_t i, size_t n) {
          h.reduce(args, &out[i], &recv[i], &in[i], n);
          h.reduce(args, &onRecv[i], &onRecv[i], &in[i], n);
          h.reduce(args, &onIn[i], &recv[i], &onIn[i], n);
        });
        EXPECT_EQ(differences(out, want), 0u) << "reduce";
        EXPECT_EQ(differences(onRecv, want), 0u) << "reduce with dst == recv";
        EXPECT_EQ(differences(onIn, want), 0u) << "reduce with dst == in";
        inPieces(kPairs, [&](size_t i, size_t n) {
          h.reduce2(args, &out[i], &out2[i], &recv[i], &in[i], n);
        });
        EXPECT_EQ(differences(out, want), 0u) << "reduce2, first destination";
        EXPECT_EQ(differences(out2, want), 0u) << "reduce2, second destination";
        inPieces(256, [&](size_t i, size_t n) {
          h.loadInput(&load[i], &codes[i], n, sizeof(T));
          h.finishOutput(&fin[i], n);
        });
        EXPECT_EQ(0, memcmp(load.data(), wantLoad.data(), 256)) << "load";
        EXPECT_EQ(0, memcmp(fin.data(), wantFinish.data(), 256)) << "finish";
      }
    }
  }
}

TEST(HostReduce, Fp8EveryPairOfCodesOnEveryBuild) {
  checkFp8Pairs<Float8e4m3>(DataType::kFloat8e4m3);
  checkFp8Pairs<Float8e5m2>(DataType::kFloat8e5m2);
}

#if defined(__x86_64__)
// The conversions of the AVX2+F16C and AVX-512 builds on their own, on
// inputs the reductions rarely produce: the fp8 codes narrow through a
// float16 rounded "to odd", which only matters for floats that truncate to
// float16 exactly on an fp8 midpoint. Wrappers carry the targets the codecs
// need; each converts one step's elements in element order.
#define BRAID_TEST_AVX512 __attribute__((target("avx2,f16c,avx512f,avx512bw,avx512vl")))

/// The AVX2+F16C codecs: eight elements, one register of floats in order.
template <typename T>
struct Avx2Step {
  static constexpr int kLanes = 8;
  __attribute__((target("avx2,f16c"))) static void narrow(const float* in, T* out) {
    using C = loops::simd::Codec<T>;
    C::storeBits(out, C::narrow(_mm256_loadu_ps(in)));
  }
  __attribute__((target("avx2,f16c"))) static void widen(const T* in, float* out) {
    using C = loops::simd::Codec<T>;
    _mm256_storeu_ps(out, C::widen(C::loadBits(in)));
  }
};

// GCC 12's false positive in its AVX-512 intrinsics (host_narrow_avx512.h).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

/// The AVX-512 codecs: bfloat16's 32 elements in two registers, element j
/// in the lane the codec's layout gives it (even / odd elements).
template <typename T>
struct Avx512Step {
  using C = loops::avx512::Codec<T>;
  static constexpr int kLanes = 32;
  static int lane(int j) { return (j % 2) * 16 + j / 2; }
  BRAID_TEST_AVX512 static void narrow(const float* in, T* out) {
    float lanes[32];
    for (int j = 0; j < 32; ++j) lanes[lane(j)] = in[j];
    C::storeBits(out, C::narrow({_mm512_loadu_ps(lanes), _mm512_loadu_ps(lanes + 16)}));
  }
  BRAID_TEST_AVX512 static void widen(const T* in, float* out) {
    float lanes[32];
    const loops::avx512::Wide v = C::widen(C::loadBits(in));
    _mm512_storeu_ps(lanes, v.a);
    _mm512_storeu_ps(lanes + 16, v.b);
    for (int j = 0; j < 32; ++j) out[j] = lanes[lane(j)];
  }
};

/// The fp8 codecs of the AVX-512 VBMI build: 64 elements in four registers.
#define BRAID_TEST_AVX512_VBMI \
  __attribute__((target("avx2,f16c,avx512f,avx512bw,avx512vl,avx512vbmi")))
template <typename T>
struct Fp8Avx512Step {
  using C = loops::fp8::Codec<T>;
  static constexpr int kLanes = 64;
  BRAID_TEST_AVX512_VBMI static void narrow(const float* in, T* out) {
    float lanes[64];
    for (int j = 0; j < 64; ++j) lanes[C::lane(j)] = in[j];
    const loops::fp8::Wide2 v = {{_mm512_loadu_ps(lanes), _mm512_loadu_ps(lanes + 16)},
                                 {_mm512_loadu_ps(lanes + 32), _mm512_loadu_ps(lanes + 48)}};
    C::storeBits(out, C::narrow(v));
  }
  BRAID_TEST_AVX512_VBMI static void widen(const T* in, float* out) {
    float lanes[64];
    const C codec;
    const loops::fp8::Wide2 v = codec.widen(C::loadBits(in));
    _mm512_storeu_ps(lanes, v.lo.a);
    _mm512_storeu_ps(lanes + 16, v.lo.b);
    _mm512_storeu_ps(lanes + 32, v.hi.a);
    _mm512_storeu_ps(lanes + 48, v.hi.b);
    for (int j = 0; j < 64; ++j) out[j] = lanes[C::lane(j)];
  }
};

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

uint32_t floatBitsOf(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

template <typename T, template <typename> class Step>
void checkSimdCodec() {
  constexpr int kLanes = Step<T>::kLanes;
  const int kPatterns = 1 << (8 * sizeof(T));
  size_t bad = 0;
  // Narrowing: random floats of every class, floats near the format's range,
  // and, for fp8, midpoints between neighbours nudged by one float ulp.
  std::mt19937_64 rng(11);
  std::vector<float> floats;
  for (int i = 0; i < (1 << 16); ++i) {
    uint32_t u = static_cast<uint32_t>(rng());
    float f;
    memcpy(&f, &u, 4);
    floats.push_back(f);
    floats.push_back(static_cast<float>(
        std::ldexp(static_cast<double>(u % 4096) + 0.5, static_cast<int>(rng() % 40) - 30)));
  }
  for (int p = 0; p + 1 < kPatterns / 2; ++p) {
    const float lo = T{static_cast<decltype(T{}.bits)>(p)}.toFloat();
    const float hi = T{static_cast<decltype(T{}.bits)>(p + 1)}.toFloat();
    if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
    const float mid = lo + (hi - lo) / 2;
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      floats.push_back(f);
      floats.push_back(-f);
    }
  }
  // Every float class by name: zeros, subnormals (which AVX512_BF16's
  // conversion would flush), infinities, NaNs quiet and signaling.
  for (uint32_t u : {0x00000000u, 0x80000000u, 0x00000001u, 0x80018000u, 0x007fffffu, 0x00408000u,
                     0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc12345u, 0x7f800001u, 0xff80ffffu,
                     0x7f7fffffu, 0xff7fffffu, 0x00800000u, 0x3f808000u, 0x3f818000u}) {
    float f;
    memcpy(&f, &u, 4);
    floats.push_back(f);
  }
  while (floats.size() % kLanes != 0) floats.push_back(0.0f);
  for (size_t i = 0; i < floats.size(); i += kLanes) {
    T got[kLanes];
    Step<T>::narrow(&floats[i], got);
    for (int k = 0; k < kLanes; ++k) {
      if (got[k].bits != T::fromFloat(floats[i + k]).bits && bad++ < 5) {
        ADD_FAILURE() << "narrow " << floats[i + k] << " (" << floatBitsOf(floats[i + k])
                      << "): " << +got[k].bits << " vs " << +T::fromFloat(floats[i + k]).bits;
      }
    }
  }
  // Widening: every pattern; a signaling bfloat16 NaN may stay signaling.
  for (int p = 0; p < kPatterns; p += kLanes) {
    T in[kLanes];
    float got[kLanes];
    for (int k = 0; k < kLanes; ++k) in[k] = T{static_cast<decltype(T{}.bits)>(p + k)};
    Step<T>::widen(in, got);
    for (int k = 0; k < kLanes; ++k) {
      const uint32_t want = floatBitsOf(in[k].toFloat());
      uint32_t have = floatBitsOf(got[k]);
      if (std::is_same<T, Bfloat16>::value && std::isnan(got[k])) have |= 0x00400000u;
      if (have != want && bad++ < 5) ADD_FAILURE() << "widen " << p + k;
    }
  }
  EXPECT_EQ(bad, 0u);
}

TEST(HostReduce, SimdConversionsMatchScalarOnes) {
  if (!hostIsaSupported(HostIsa::kAvx2F16c)) GTEST_SKIP() << "no AVX2 + F16C";
  checkSimdCodec<Float16, Avx2Step>();
  checkSimdCodec<Bfloat16, Avx2Step>();
  checkSimdCodec<Float8e4m3, Avx2Step>();
  checkSimdCodec<Float8e5m2, Avx2Step>();
}

TEST(HostReduce, Avx512ConversionsMatchScalarOnes) {
  if (!hostIsaSupported(HostIsa::kAvx512)) GTEST_SKIP() << "no AVX-512 F, BW and VL";
  checkSimdCodec<Bfloat16, Avx512Step>();
  if (!__builtin_cpu_supports("avx512vbmi")) GTEST_SKIP() << "no AVX-512 VBMI, which fp8 needs";
  checkSimdCodec<Float8e4m3, Fp8Avx512Step>();
  checkSimdCodec<Float8e5m2, Fp8Avx512Step>();
}
#endif

/// `count` elements of T that end where an unmapped page begins: touching
/// the element after the last faults.
template <typename T>
class BufferAtPageEnd {
 public:
  explicit BufferAtPageEnd(size_t count) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t dataPages = (count * sizeof(T) + page - 1) / page;
    bytes_ = (dataPages + 1) * page;
    base_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(base_, MAP_FAILED);
    auto* guard = static_cast<unsigned char*>(base_) + dataPages * page;
    EXPECT_EQ(mprotect(guard, page, PROT_NONE), 0);
    data_ = reinterpret_cast<T*>(guard) - count;
  }
  ~BufferAtPageEnd() { munmap(base_, bytes_); }
  BufferAtPageEnd(const BufferAtPageEnd&) = delete;
  BufferAtPageEnd& operator=(const BufferAtPageEnd&) = delete;
  T* data() const { return data_; }

 private:
  void* base_ = nullptr;
  size_t bytes_ = 0;
  T* data_ = nullptr;
};

/// Every loop of every build on buffers that end at an unmapped page, for
/// every length up to a few steps: a vector load or store past the last
/// element (a tail done as a whole step, a mask one lane too wide) crashes
/// the test. The results must be the portable build's.
template <typename T>
void checkStopsAtTheEnd(DataType type) {
  using M = typename ModelOf<T>::type;
  std::mt19937_64 rng(3);
  OpArgs args;
  args.nranks = 3;
  const T scalar = M::scalars()[1];
  args.setScalar(&scalar, sizeof scalar);
  for (RedOp op : {RedOp::kSum, RedOp::kMax, RedOp::kAvg, RedOp::kPreMulSum}) {
    for (size_t n = 1; n <= 100; ++n) {
      const auto recv = randomVector<T>(n, rng);
      const auto in = randomVector<T>(n, rng);
      auto portable = hostOp(type, op, args, HostIsa::kPortable);
      ASSERT_TRUE(portable.ok());
      std::vector<T> want(n), wantLoad(n), wantFinish(recv);
      portable.value().reduce(args, want.data(), recv.data(), in.data(), n);
      portable.value().loadInput(wantLoad.data(), in.data(), n, sizeof(T));
      portable.value().finishOutput(wantFinish.data(), n);
      for (HostIsa isa : supportedIsas()) {
        SCOPED_TRACE(std::string(dataTypeName(type)) + " " + redOpName(op) +
                     " n=" + std::to_string(n) + " build=" + hostIsaName(isa));
        auto h = hostOp(type, op, args, isa);
        ASSERT_TRUE(h.ok());
        BufferAtPageEnd<T> r(n), x(n), d(n), d2(n);
        std::copy(recv.begin(), recv.end(), r.data());
        std::copy(in.begin(), in.end(), x.data());
        h.value().reduce(args, d.data(), r.data(), x.data(), n);
        EXPECT_EQ(countMismatches(std::vector<T>(d.data(), d.data() + n), want), 0u) << "reduce";
        h.value().reduce2(args, d.data(), d2.data(), r.data(), x.data(), n);
        EXPECT_EQ(countMismatches(std::vector<T>(d2.data(), d2.data() + n), want), 0u) << "reduce2";
        h.value().loadInput(d.data(), x.data(), n, sizeof(T));
        EXPECT_EQ(countMismatches(std::vector<T>(d.data(), d.data() + n), wantLoad), 0u) << "load";
        h.value().finishOutput(r.data(), n);
        EXPECT_EQ(countMismatches(std::vector<T>(r.data(), r.data() + n), wantFinish), 0u)
            << "finish";
      }
    }
  }
}

TEST(HostReduce, NoBuildTouchesMemoryPastTheLastElement) {
  checkStopsAtTheEnd<Float16>(DataType::kFloat16);
  checkStopsAtTheEnd<Bfloat16>(DataType::kBfloat16);
  checkStopsAtTheEnd<Float8e4m3>(DataType::kFloat8e4m3);
  checkStopsAtTheEnd<Float8e5m2>(DataType::kFloat8e5m2);
  checkStopsAtTheEnd<float>(DataType::kFloat32);
  checkStopsAtTheEnd<int8_t>(DataType::kInt8);
}

TEST(HostReduce, SignedIntegersWrapAround) {
  auto sum = hostOp(DataType::kInt32, RedOp::kSum, OpArgs{});
  ASSERT_TRUE(sum.ok());
  int32_t a = std::numeric_limits<int32_t>::max(), b = 1, out = 0;
  sum.value().reduce(OpArgs{}, &out, &a, &b, 1);
  EXPECT_EQ(out, std::numeric_limits<int32_t>::min());
  auto mul = hostOp(DataType::kInt8, RedOp::kProd, OpArgs{});
  ASSERT_TRUE(mul.ok());
  int8_t x = 100, y = 3, z = 0;
  mul.value().reduce(OpArgs{}, &z, &x, &y, 1);
  EXPECT_EQ(z, static_cast<int8_t>(300 - 256));
}

TEST(HostReduce, AvgDividesOnceTruncatingTowardZero) {
  OpArgs args;
  args.nranks = 4;
  auto avg = hostOp(DataType::kInt32, RedOp::kAvg, args);
  ASSERT_TRUE(avg.ok());
  // Four ranks contributed -3, 1, 2, 7 (sum 7) and 0, 0, 0, -7 (sum -7).
  std::vector<int32_t> buf = {7, -7, 8, -8};
  avg.value().finishOutput(buf.data(), buf.size());
  EXPECT_EQ(buf, (std::vector<int32_t>{1, -1, 2, -2}));
  auto half = hostOp(DataType::kFloat16, RedOp::kAvg, args);
  ASSERT_TRUE(half.ok());
  Float16 h[2] = {Float16::fromFloat(1.0f), Float16::fromFloat(65504.0f)};
  half.value().finishOutput(h, 2);
  EXPECT_EQ(h[0].toFloat(), 0.25f);
  EXPECT_EQ(h[1].toFloat(), 16376.0f);
}

TEST(HostReduce, PreMulSumScalesOnlyTheOwnInput) {
  OpArgs args;
  const float s = 2.0f;
  args.setScalar(&s, sizeof s);
  auto op = hostOp(DataType::kFloat32, RedOp::kPreMulSum, args);
  ASSERT_TRUE(op.ok());
  float recv[3] = {1, 2, 3}, in[3] = {10, 20, 30}, out[3] = {};
  op.value().reduce(op.value().args, out, recv, in, 3);
  EXPECT_EQ(out[0], 21.0f);
  EXPECT_EQ(out[2], 63.0f);
  op.value().loadInput(out, in, 3, sizeof(float));
  EXPECT_EQ(out[1], 40.0f);
  // e4m3: 2 * 300 = 600 saturates to 448 before the sum.
  const Float8e4m3 s8 = Float8e4m3::fromFloat(2.0f);
  args.setScalar(&s8, 1);
  auto fp8 = hostOp(DataType::kFloat8e4m3, RedOp::kPreMulSum, args);
  ASSERT_TRUE(fp8.ok());
  Float8e4m3 r8 = Float8e4m3::fromFloat(-448.0f), x8 = Float8e4m3::fromFloat(288.0f), o8{};
  fp8.value().reduce(fp8.value().args, &o8, &r8, &x8, 1);
  EXPECT_EQ(o8.toFloat(), 0.0f);
}

TEST(HostReduce, LoadInputCopiesWhenThereIsNoPre) {
  auto sum = hostOp(DataType::kUint8, RedOp::kSum, OpArgs{});
  ASSERT_TRUE(sum.ok());
  std::vector<uint8_t> in = {1, 2, 3, 4, 5}, out(5, 0);
  sum.value().loadInput(out.data(), in.data(), in.size(), 1);
  EXPECT_EQ(out, in);
  sum.value().loadInput(in.data(), in.data(), in.size(), 1);  // in place: nothing to do
  sum.value().finishOutput(out.data(), out.size());           // no finish: nothing to do
  EXPECT_EQ(out, in);
}

TEST(HostReduce, BadArgumentsSayWhat) {
  auto type = hostOp(static_cast<DataType>(12), RedOp::kSum, OpArgs{});
  ASSERT_FALSE(type.ok());
  EXPECT_EQ(type.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(type.status().message().find("datatype 12"), std::string::npos);
  auto op = hostOp(DataType::kFloat32, static_cast<RedOp>(6), OpArgs{});
  ASSERT_FALSE(op.ok());
  EXPECT_NE(op.status().message().find("op 6"), std::string::npos);
  OpArgs noRanks;
  noRanks.nranks = 0;
  auto avg = hostOp(DataType::kFloat32, RedOp::kAvg, noRanks);
  ASSERT_FALSE(avg.ok());
  EXPECT_NE(avg.status().message().find("avg"), std::string::npos);
  EXPECT_TRUE(hostOp(DataType::kFloat32, RedOp::kSum, noRanks).ok());  // only avg needs ranks
  EXPECT_STREQ(redOpName(RedOp::kPreMulSum), "premulsum");
}

TEST(HostReduce, CopyTwiceWritesBothDestinations) {
  for (size_t bytes : {size_t(0), size_t(1), size_t(9), size_t(4096 + 5)}) {
    std::vector<unsigned char> src(bytes), d1(bytes, 0), d2(bytes, 0);
    for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>(i * 31 + 7);
    copyTwice(d1.data(), d2.data(), src.data(), bytes);
    EXPECT_EQ(d1, src);
    EXPECT_EQ(d2, src);
  }
}

TEST(HostReduce, CopyBytesCopiesEveryLengthAndAlignment) {
  std::vector<unsigned char> src(1 << 16), dst(1 << 16);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 3);
  for (size_t offset : {size_t(0), size_t(1), size_t(7)}) {
    for (size_t bytes : {size_t(0), size_t(1), size_t(15), size_t(4096), size_t(65000)}) {
      std::fill(dst.begin(), dst.end(), 0);
      copyBytes(dst.data() + offset, src.data() + (7 - offset), bytes);
      EXPECT_EQ(0, memcmp(dst.data() + offset, src.data() + (7 - offset), bytes));
      if (offset + bytes < dst.size()) {
        EXPECT_EQ(dst[offset + bytes], 0) << "wrote past the end";
      }
    }
  }
}

}  // namespace
}  // namespace braid::kernels
