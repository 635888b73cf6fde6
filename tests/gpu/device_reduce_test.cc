// The device reduction kernels give the same bits as the host loops.
// Labelled `gpu`; skipped on machines without a CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/device_reduce.h"
#include "kernels/host_reduce.h"

namespace braid::kernels {
namespace {

template <typename T>
void checkPair(DataType type, RedOp op, size_t count) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> dist(-100, 100);
  std::vector<T> a(count), b(count), hostOut(count), devOut(count);
  for (size_t i = 0; i < count; ++i) {
    a[i] = static_cast<T>(dist(rng));
    b[i] = static_cast<T>(dist(rng));
  }
  auto host = hostReduceFn(type, op);
  ASSERT_TRUE(host.ok()) << host.status().message();
  host.value()(hostOut.data(), a.data(), b.data(), count);

  T *da = nullptr, *db = nullptr, *dd = nullptr;
  ASSERT_EQ(cudaMalloc(&da, count * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&db, count * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dd, count * sizeof(T)), cudaSuccess);
  cudaMemcpy(da, a.data(), count * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), count * sizeof(T), cudaMemcpyHostToDevice);
  Status s = deviceReduce(type, op, dd, da, db, count, nullptr);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(cudaMemcpy(devOut.data(), dd, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dd);
  EXPECT_EQ(memcmp(devOut.data(), hostOut.data(), count * sizeof(T)), 0)
      << dataTypeName(type) << " " << redOpName(op);
}

TEST(DeviceReduce, MatchesHostBitForBit) {
  if (!cudaDeviceAvailable()) GTEST_SKIP() << "no CUDA device";
  for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin}) {
    checkPair<float>(DataType::kFloat32, op, 1 << 20);
    checkPair<double>(DataType::kFloat64, op, 100003);
    checkPair<int32_t>(DataType::kInt32, op, 4099);
    checkPair<int8_t>(DataType::kInt8, op, 777);
    checkPair<uint64_t>(DataType::kUint64, op, 5);
  }
}

}  // namespace
}  // namespace braid::kernels
