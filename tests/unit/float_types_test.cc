// float16, bfloat16, fp8 e4m3 and fp8 e5m2 (kernels/float_types.h) against
// an independent model of each format (float_reference.h): every bit pattern
// widened and round-tripped, narrowing of random floats and of every midpoint
// between neighbouring values (ties to even), overflow, NaN and subnormals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "kernels/float_types.h"
#include "support/uniform_real.h"
#include "unit/float_reference.h"

namespace braid::kernels {
namespace {

using reference::FormatModel;
using reference::FormatSpec;

template <typename T>
struct Info;
template <>
struct Info<Float16> {
  static constexpr FormatSpec kSpec = reference::kHalfSpec;
  static constexpr const char* kName = "float16";
};
template <>
struct Info<Bfloat16> {
  static constexpr FormatSpec kSpec = reference::kBfloat16Spec;
  static constexpr const char* kName = "bfloat16";
};
template <>
struct Info<Float8e4m3> {
  static constexpr FormatSpec kSpec = reference::kE4m3Spec;
  static constexpr const char* kName = "e4m3";
};
template <>
struct Info<Float8e5m2> {
  static constexpr FormatSpec kSpec = reference::kE5m2Spec;
  static constexpr const char* kName = "e5m2";
};

uint32_t bitsOf(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

float floatOf(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

template <typename T>
T make(uint32_t bits) {
  return T{static_cast<decltype(T{}.bits)>(bits)};
}

/// Counts mismatches and reports the first few, so a broken conversion does
/// not print 65536 lines.
class Mismatches {
 public:
  void add(const std::string& what) {
    if (count_++ < 5) ADD_FAILURE() << what;
  }
  ~Mismatches() { EXPECT_EQ(count_, 0) << "mismatches in total"; }

 private:
  int count_ = 0;
};

std::string hex(uint32_t v) {
  char buf[16];
  snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

template <typename T>
void checkWidenEveryPattern() {
  const FormatModel model(Info<T>::kSpec);
  Mismatches bad;
  for (int p = 0; p < model.patterns(); ++p) {
    const float got = make<T>(p).toFloat();
    const double want = model.decode(p);
    const bool sameSign = std::signbit(got) == std::signbit(want);
    if (std::isnan(want)) {
      // NaN: still NaN, same sign, quiet.
      if (!std::isnan(got) || !sameSign || (bitsOf(got) & 0x00400000u) == 0) {
        bad.add(std::string(Info<T>::kName) + " " + hex(p) + " -> " + hex(bitsOf(got)));
      }
    } else if (static_cast<double>(got) != want || !sameSign) {
      bad.add(std::string(Info<T>::kName) + " " + hex(p) + " -> " + std::to_string(got) +
              ", want " + std::to_string(want));
    }
  }
}

TEST(FloatTypes, WideningIsExactForEveryPattern) {
  checkWidenEveryPattern<Float16>();
  checkWidenEveryPattern<Bfloat16>();
  checkWidenEveryPattern<Float8e4m3>();
  checkWidenEveryPattern<Float8e5m2>();
}

template <typename T>
void checkRoundTripEveryPattern() {
  const FormatSpec spec = Info<T>::kSpec;
  const FormatModel model(spec);
  const uint32_t quietBit = 1u << (spec.manBits - 1);
  Mismatches bad;
  for (int p = 0; p < model.patterns(); ++p) {
    const uint32_t back = T::fromFloat(make<T>(p).toFloat()).bits;
    uint32_t want = p;
    const double v = model.decode(p);
    if (std::isnan(v) && spec.ieee) want = p | quietBit;  // a signaling NaN comes back quiet
    if (std::isinf(v) && spec.saturate) {
      want = (p & model.signBit()) | model.maxFiniteCode();  // e5m2: infinity saturates
    }
    if (back != want) {
      bad.add(std::string(Info<T>::kName) + " " + hex(p) + " -> " + hex(back) + ", want " +
              hex(want));
    }
  }
}

TEST(FloatTypes, EveryPatternRoundTripsThroughFloat) {
  checkRoundTripEveryPattern<Float16>();
  checkRoundTripEveryPattern<Bfloat16>();
  checkRoundTripEveryPattern<Float8e4m3>();
  checkRoundTripEveryPattern<Float8e5m2>();
}

template <typename T>
void checkNarrow(const FormatModel& model, float f, Mismatches& bad) {
  const uint32_t got = T::fromFloat(f).bits;
  if (std::isnan(f)) {
    const bool sign = (got & model.signBit()) != 0;
    if (!model.isNan(got) || sign != std::signbit(f)) {
      bad.add(std::string(Info<T>::kName) + " NaN " + hex(bitsOf(f)) + " -> " + hex(got));
    }
    return;
  }
  const uint32_t want = model.roundBits(f);
  if (got != want) {
    bad.add(std::string(Info<T>::kName) + " " + hex(bitsOf(f)) + " (" + std::to_string(f) +
            ") -> " + hex(got) + ", want " + hex(want));
  }
}

template <typename T>
void checkNarrowing() {
  const FormatModel model(Info<T>::kSpec);
  Mismatches bad;
  // Random floats of every magnitude, sign and class.
  std::mt19937 rng(7);
  for (int i = 0; i < (1 << 19); ++i) checkNarrow<T>(model, floatOf(rng()), bad);
  // Floats in and near the format's range, where rounding matters.
  for (int i = 0; i < (1 << 18); ++i) {
    const double scale = braid::testing::uniformReal(rng, -30, 20);
    const float f = static_cast<float>(std::exp2(scale)) * (rng() & 1 ? -1.0f : 1.0f);
    checkNarrow<T>(model, f, bad);
  }
  // Every midpoint between neighbouring values (exact in float), and the
  // floats on either side: ties go to the even neighbour. The midpoint above
  // the largest finite value tests overflow.
  for (uint32_t c = 0; c <= model.maxFiniteCode(); ++c) {
    const double lo = model.decode(c);
    const double hi =
        c < model.maxFiniteCode() ? model.decode(c + 1) : lo + (lo - model.decode(c - 1));
    const float mid = static_cast<float>((lo + hi) / 2);
    for (float f :
         {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), static_cast<float>(lo)}) {
      checkNarrow<T>(model, f, bad);
      checkNarrow<T>(model, -f, bad);
    }
  }
}

TEST(FloatTypes, NarrowingRoundsToNearestEven) {
  checkNarrowing<Float16>();
  checkNarrowing<Bfloat16>();
  checkNarrowing<Float8e4m3>();
  checkNarrowing<Float8e5m2>();
}

TEST(FloatTypes, ChosenValuesRoundAsSpecified) {
  const float inf = std::numeric_limits<float>::infinity();
  // float16: ties to even, the largest finite value, overflow to infinity, subnormals.
  EXPECT_EQ(Float16::fromFloat(1.0f).bits, 0x3c00);
  EXPECT_EQ(Float16::fromFloat(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);
  EXPECT_EQ(Float16::fromFloat(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);
  EXPECT_EQ(Float16::fromFloat(65504.0f).bits, 0x7bff);
  EXPECT_EQ(Float16::fromFloat(65519.0f).bits, 0x7bff);
  EXPECT_EQ(Float16::fromFloat(65520.0f).bits, 0x7c00);
  EXPECT_EQ(Float16::fromFloat(-1e10f).bits, 0xfc00);
  EXPECT_EQ(Float16::fromFloat(std::ldexp(1.0f, -14)).bits, 0x0400);
  EXPECT_EQ(Float16::fromFloat(std::ldexp(1.0f, -24)).bits, 0x0001);
  EXPECT_EQ(Float16::fromFloat(std::ldexp(1.0f, -25)).bits, 0x0000);
  EXPECT_EQ(Float16::fromFloat(std::ldexp(1.0001f, -25)).bits, 0x0001);
  EXPECT_EQ(Float16::fromFloat(std::ldexp(3.0f, -25)).bits, 0x0002);
  EXPECT_EQ(Float16::fromFloat(-0.0f).bits, 0x8000);
  EXPECT_EQ(Float16::fromFloat(std::numeric_limits<float>::denorm_min()).bits, 0x0000);
  EXPECT_EQ(Float16{0x0001}.toFloat(), std::ldexp(1.0f, -24));
  // bfloat16.
  EXPECT_EQ(Bfloat16::fromFloat(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);
  EXPECT_EQ(Bfloat16::fromFloat(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82);
  EXPECT_EQ(Bfloat16::fromFloat(std::numeric_limits<float>::max()).bits, 0x7f80);
  EXPECT_EQ(Bfloat16::fromFloat(-inf).bits, 0xff80);
  EXPECT_EQ(Bfloat16::fromFloat(std::numeric_limits<float>::denorm_min()).bits, 0x0000);
  EXPECT_EQ(Bfloat16::fromFloat(std::ldexp(1.0f, -133)).bits, 0x0001);
  // e4m3: saturation of large values and infinities to 448, subnormals down to 2^-9.
  EXPECT_EQ(Float8e4m3::fromFloat(1.0f).bits, 0x38);
  EXPECT_EQ(Float8e4m3::fromFloat(448.0f).bits, 0x7e);
  EXPECT_EQ(Float8e4m3::fromFloat(464.0f).bits, 0x7e);
  EXPECT_EQ(Float8e4m3::fromFloat(500.0f).bits, 0x7e);
  EXPECT_EQ(Float8e4m3::fromFloat(1e30f).bits, 0x7e);
  EXPECT_EQ(Float8e4m3::fromFloat(inf).bits, 0x7e);
  EXPECT_EQ(Float8e4m3::fromFloat(-inf).bits, 0xfe);
  EXPECT_EQ(Float8e4m3::fromFloat(std::ldexp(1.0f, -6)).bits, 0x08);
  EXPECT_EQ(Float8e4m3::fromFloat(std::ldexp(1.0f, -9)).bits, 0x01);
  EXPECT_EQ(Float8e4m3::fromFloat(std::ldexp(1.0f, -10)).bits, 0x00);
  EXPECT_EQ(Float8e4m3::fromFloat(std::ldexp(3.0f, -10)).bits, 0x02);
  EXPECT_EQ(Float8e4m3{0x7e}.toFloat(), 448.0f);
  // e5m2: saturation to 57344, infinities included.
  EXPECT_EQ(Float8e5m2::fromFloat(1.0f).bits, 0x3c);
  EXPECT_EQ(Float8e5m2::fromFloat(57344.0f).bits, 0x7b);
  EXPECT_EQ(Float8e5m2::fromFloat(61440.0f).bits, 0x7b);
  EXPECT_EQ(Float8e5m2::fromFloat(1e9f).bits, 0x7b);
  EXPECT_EQ(Float8e5m2::fromFloat(inf).bits, 0x7b);
  EXPECT_EQ(Float8e5m2::fromFloat(-inf).bits, 0xfb);
  EXPECT_EQ(Float8e5m2::fromFloat(std::ldexp(1.0f, -16)).bits, 0x01);
  EXPECT_EQ(Float8e5m2{0x7c}.toFloat(), inf);
}

TEST(FloatTypes, NanKeepsSignAndLeadingPayloadAndBecomesQuiet) {
  // float16, as x86's F16C instructions do it.
  EXPECT_EQ(Float16::fromFloat(floatOf(0x7fc00000u)).bits, 0x7e00);
  EXPECT_EQ(Float16::fromFloat(floatOf(0xffc00000u)).bits, 0xfe00);
  EXPECT_EQ(Float16::fromFloat(floatOf(0x7f800001u)).bits, 0x7e00);
  EXPECT_EQ(Float16::fromFloat(floatOf(0x7f802000u)).bits, 0x7e01);
  EXPECT_EQ(bitsOf(Float16{0x7c01}.toFloat()), 0x7fc02000u);
  EXPECT_EQ(bitsOf(Float16{0xfd00}.toFloat()), 0xffe00000u);
  // bfloat16.
  EXPECT_EQ(Bfloat16::fromFloat(floatOf(0x7f800001u)).bits, 0x7fc0);
  EXPECT_EQ(Bfloat16::fromFloat(floatOf(0xffa10000u)).bits, 0xffe1);
  EXPECT_EQ(bitsOf(Bfloat16{0x7f81}.toFloat()), 0x7fc10000u);
  // e4m3 has one NaN per sign.
  EXPECT_EQ(Float8e4m3::fromFloat(floatOf(0x7fc00000u)).bits, 0x7f);
  EXPECT_EQ(Float8e4m3::fromFloat(floatOf(0xff800001u)).bits, 0xff);
  EXPECT_TRUE(std::isnan(Float8e4m3{0xff}.toFloat()));
  // e5m2, as CUDA's conversion does it: quiet bit set, next payload bit kept.
  EXPECT_EQ(Float8e5m2::fromFloat(floatOf(0x7fc00000u)).bits, 0x7e);
  EXPECT_EQ(Float8e5m2::fromFloat(floatOf(0x7fe00000u)).bits, 0x7f);
  EXPECT_EQ(Float8e5m2::fromFloat(floatOf(0xff800001u)).bits, 0xfe);
  EXPECT_EQ(bitsOf(Float8e5m2{0x7d}.toFloat()), 0x7fe00000u);
}

}  // namespace
}  // namespace braid::kernels
