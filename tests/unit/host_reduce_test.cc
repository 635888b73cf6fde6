// The host reduction loops against a scalar reference, for every (type, op)
// implemented, with lengths that exercise vector bodies and tails, aliasing
// (in-place) use, the fused two-destination forms, and integer wrap-around.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/host_reduce.h"
#include "kernels/reduce_op.h"

namespace braid::kernels {
namespace {

template <typename T>
T reference(T a, T b, RedOp op) {
  using W = typename WrapType<T>::type;  // unsigned for integers: wraps
  switch (op) {
    case RedOp::kSum:
      if constexpr (std::is_integral<T>::value) return static_cast<T>(W(a) + W(b));
      return static_cast<T>(a + b);
    case RedOp::kProd:
      if constexpr (std::is_integral<T>::value) return static_cast<T>(W(a) * W(b));
      return static_cast<T>(a * b);
    case RedOp::kMax:
      return a < b ? b : a;
    default:
      return b < a ? b : a;
  }
}

template <typename T>
std::vector<T> randomVector(size_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_integral<T>::value) {
      x = static_cast<T>(rng());
    } else {
      x = static_cast<T>(std::uniform_real_distribution<double>(-1e3, 1e3)(rng));
    }
  }
  return v;
}

template <typename T>
void checkType(DataType type) {
  std::mt19937_64 rng(42);
  for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin}) {
    auto fns = hostReduceFns(type, op);
    ASSERT_TRUE(fns.ok()) << fns.status().message();
    for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(33), size_t(1000), size_t(4099)}) {
      auto a = randomVector<T>(n, rng);
      auto b = randomVector<T>(n, rng);
      std::vector<T> want(n), out(n), out2(n);
      for (size_t i = 0; i < n; ++i) want[i] = reference(a[i], b[i], op);
      fns.value().reduce(out.data(), a.data(), b.data(), n);
      EXPECT_EQ(0, memcmp(out.data(), want.data(), n * sizeof(T)))
          << dataTypeName(type) << " " << redOpName(op) << " n=" << n;
      fns.value().reduce2(out.data(), out2.data(), a.data(), b.data(), n);
      EXPECT_EQ(0, memcmp(out2.data(), want.data(), n * sizeof(T)));
      EXPECT_EQ(0, memcmp(out.data(), want.data(), n * sizeof(T)));
      // In place: dst is one of the inputs.
      fns.value().reduce(a.data(), a.data(), b.data(), n);
      EXPECT_EQ(0, memcmp(a.data(), want.data(), n * sizeof(T)));
    }
  }
}

TEST(HostReduce, EveryNativeTypeAndOpMatchesScalarReference) {
  checkType<int8_t>(DataType::kInt8);
  checkType<uint8_t>(DataType::kUint8);
  checkType<int32_t>(DataType::kInt32);
  checkType<uint32_t>(DataType::kUint32);
  checkType<int64_t>(DataType::kInt64);
  checkType<uint64_t>(DataType::kUint64);
  checkType<float>(DataType::kFloat32);
  checkType<double>(DataType::kFloat64);
}

TEST(HostReduce, SignedIntegersWrapAround) {
  auto fn = hostReduceFn(DataType::kInt32, RedOp::kSum);
  ASSERT_TRUE(fn.ok());
  int32_t a = std::numeric_limits<int32_t>::max(), b = 1, out = 0;
  fn.value()(&out, &a, &b, 1);
  EXPECT_EQ(out, std::numeric_limits<int32_t>::min());
  auto mul = hostReduceFn(DataType::kInt8, RedOp::kProd);
  ASSERT_TRUE(mul.ok());
  int8_t x = 100, y = 3, z = 0;
  mul.value()(&z, &x, &y, 1);
  EXPECT_EQ(z, static_cast<int8_t>(300 - 256));
}

TEST(HostReduce, UnimplementedPairsSayWhich) {
  auto fn = hostReduceFn(DataType::kBfloat16, RedOp::kSum);
  ASSERT_FALSE(fn.ok());
  EXPECT_EQ(fn.status().code(), ErrorCode::kInvalidUsage);
  EXPECT_NE(fn.status().message().find("bfloat16"), std::string::npos) << fn.status().message();
  auto avg = hostReduceFn(DataType::kFloat32, RedOp::kAvg);
  ASSERT_FALSE(avg.ok());
  EXPECT_NE(avg.status().message().find("avg"), std::string::npos);
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
