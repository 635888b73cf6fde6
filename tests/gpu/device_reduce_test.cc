// The device kernels (kernels/device_reduce.h) give the host loops' bits for
// every (datatype, op) pair: reduce (also in place), premulsum's load and
// avg's finish, on random inputs that include every special value of the
// 16- and 8-bit float types. The one allowed difference is NaN payloads: a
// GPU float operation returns its canonical NaN. Labelled `gpu`; skipped on
// machines without a CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/device_reduce.h"
#include "kernels/float_types.h"
#include "kernels/host_reduce.h"

namespace braid::kernels {
namespace {

template <typename T>
bool isNan(T x) {
  if constexpr (kIsNarrowFloat<T>) {
    return std::isnan(x.toFloat());
  } else if constexpr (std::is_floating_point<T>::value) {
    return std::isnan(x);
  } else {
    return false;
  }
}

template <typename T>
T randomElement(std::mt19937_64& rng) {
  if constexpr (kIsNarrowFloat<T>) {
    return T{static_cast<decltype(T{}.bits)>(rng())};  // random bits: every class appears
  } else if constexpr (std::is_floating_point<T>::value) {
    if (rng() % 32 == 0) return std::numeric_limits<T>::infinity();
    return static_cast<T>(std::uniform_real_distribution<double>(-1e3, 1e3)(rng));
  } else {
    return static_cast<T>(rng());
  }
}

template <typename T>
size_t mismatches(const std::vector<T>& device, const std::vector<T>& host) {
  size_t bad = 0;
  for (size_t i = 0; i < host.size(); ++i) {
    if (memcmp(&device[i], &host[i], sizeof(T)) == 0) continue;
    if (!(isNan(device[i]) && isNan(host[i]))) ++bad;
  }
  return bad;
}

/// Device memory holding a copy of a host vector.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<T>& v) : n_(v.size()) {
    EXPECT_EQ(cudaMalloc(&p_, bytes() > 0 ? bytes() : 1), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(p_, v.data(), bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return p_; }
  std::vector<T> read() const {
    std::vector<T> v(n_);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(v.data(), p_, bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  }

 private:
  size_t bytes() const { return n_ * sizeof(T); }
  T* p_ = nullptr;
  size_t n_;
};

template <typename T>
void checkPair(DataType type, RedOp op, const OpArgs& args, size_t count, std::mt19937_64& rng) {
  SCOPED_TRACE(std::string(dataTypeName(type)) + " " + redOpName(op) +
               " n=" + std::to_string(count) + " nranks=" + std::to_string(args.nranks));
  std::vector<T> a(count), b(count);
  for (size_t i = 0; i < count; ++i) {
    a[i] = randomElement<T>(rng);
    b[i] = randomElement<T>(rng);
  }
  auto made = hostOp(type, op, args);
  ASSERT_TRUE(made.ok()) << made.status().message();
  const HostOp& host = made.value();
  std::vector<T> want(count), wantLoad(count), wantFinish(a);
  host.reduce(host.args, want.data(), a.data(), b.data(), count);
  host.loadInput(wantLoad.data(), b.data(), count, sizeof(T));
  host.finishOutput(wantFinish.data(), count);

  const std::vector<T> zeros(count);
  DeviceBuffer<T> da(a), db(b), out(zeros);
  ASSERT_TRUE(deviceReduce(type, op, args, out.get(), da.get(), db.get(), count, nullptr).ok());
  EXPECT_EQ(mismatches(out.read(), want), 0u) << "reduce";
  {
    DeviceBuffer<T> inPlace(a);  // dst == a
    ASSERT_TRUE(
        deviceReduce(type, op, args, inPlace.get(), inPlace.get(), db.get(), count, nullptr).ok());
    EXPECT_EQ(mismatches(inPlace.read(), want), 0u) << "reduce, dst == a";
  }
  {
    DeviceBuffer<T> inPlace(b);  // dst == b
    ASSERT_TRUE(
        deviceReduce(type, op, args, inPlace.get(), da.get(), inPlace.get(), count, nullptr).ok());
    EXPECT_EQ(mismatches(inPlace.read(), want), 0u) << "reduce, dst == b";
  }
  ASSERT_TRUE(deviceLoad(type, op, args, out.get(), db.get(), count, nullptr).ok());
  EXPECT_EQ(mismatches(out.read(), wantLoad), 0u) << "load";
  ASSERT_TRUE(deviceFinish(type, op, args, da.get(), count, nullptr).ok());
  EXPECT_EQ(mismatches(da.read(), wantFinish), 0u) << "finish";
}

template <typename T>
std::vector<T> scalarsFor() {
  if constexpr (kIsNarrowFloat<T>) {
    return {T::fromFloat(1.0f), T::fromFloat(-2.0f), T::fromFloat(0.1f)};
  } else if constexpr (std::is_floating_point<T>::value) {
    return {T(1), T(-3), T(0.1)};
  } else {
    return {T(1), static_cast<T>(-3), T(7)};
  }
}

template <typename T>
void checkType(DataType type) {
  std::mt19937_64 rng(1234 + static_cast<int>(type));
  for (size_t count : {size_t(1), size_t(7), size_t(4099), size_t(1) << 20}) {
    for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin}) {
      checkPair<T>(type, op, OpArgs{}, count, rng);
    }
    for (int nranks : {1, 3, 200}) {
      OpArgs args;
      args.nranks = nranks;
      checkPair<T>(type, RedOp::kAvg, args, count, rng);
    }
    for (T s : scalarsFor<T>()) {
      OpArgs args;
      args.setScalar(&s, sizeof s);
      checkPair<T>(type, RedOp::kPreMulSum, args, count, rng);
    }
  }
}

class DeviceReduce : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cudaDeviceAvailable()) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(DeviceReduce, IntegersMatchHostBitForBit) {
  checkType<int8_t>(DataType::kInt8);
  checkType<uint8_t>(DataType::kUint8);
  checkType<int32_t>(DataType::kInt32);
  checkType<uint32_t>(DataType::kUint32);
  checkType<int64_t>(DataType::kInt64);
  checkType<uint64_t>(DataType::kUint64);
}

TEST_F(DeviceReduce, FloatAndDoubleMatchHostBitForBit) {
  checkType<float>(DataType::kFloat32);
  checkType<double>(DataType::kFloat64);
}

TEST_F(DeviceReduce, NarrowFloatsMatchHostBitForBit) {
  checkType<Float16>(DataType::kFloat16);
  checkType<Bfloat16>(DataType::kBfloat16);
  checkType<Float8e4m3>(DataType::kFloat8e4m3);
  checkType<Float8e5m2>(DataType::kFloat8e5m2);
}

TEST_F(DeviceReduce, BadArgumentsAreRejected) {
  OpArgs noRanks;
  noRanks.nranks = 0;
  EXPECT_FALSE(deviceFinish(DataType::kFloat32, RedOp::kAvg, noRanks, nullptr, 0, nullptr).ok());
  EXPECT_FALSE(deviceReduce(static_cast<DataType>(12), RedOp::kSum, OpArgs{}, nullptr, nullptr,
                            nullptr, 0, nullptr)
                   .ok());
}

}  // namespace
}  // namespace braid::kernels
