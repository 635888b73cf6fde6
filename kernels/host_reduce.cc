// The table of host reduction loops, one instantiation per (type, op).
//
// The loops are written so that GCC vectorizes them (restrict-free element
// loops over a contiguous range with a simple functor); the aliasing cases
// (dst == a) are legal because each element is read before it is written.
// float32 sum, the hottest pair, has an AVX2 build of the same loop selected
// at run time, so the library still runs on CPUs without AVX2.
#include "kernels/host_reduce.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/reduce_op.h"

namespace braid::kernels {
namespace {

template <typename T, template <typename> class Func>
void reduceLoop(void* dst, const void* a, const void* b, size_t count) {
  T* d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  Func<T> f;
  for (size_t i = 0; i < count; ++i) d[i] = f(x[i], y[i]);
}

template <typename T, template <typename> class Func>
void reduceLoop2(void* dst1, void* dst2, const void* a, const void* b, size_t count) {
  T* d1 = static_cast<T*>(dst1);
  T* d2 = static_cast<T*>(dst2);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  Func<T> f;
  for (size_t i = 0; i < count; ++i) {
    T v = f(x[i], y[i]);
    d1[i] = v;
    d2[i] = v;
  }
}

#if defined(__x86_64__)
// The target attribute lets GCC emit 256-bit loads and adds for these loops
// (it unrolls them at -O3). Same rounding as the scalar loop: one add per
// element, so the result does not depend on the path taken.
__attribute__((target("avx2"))) void sumFloat32Avx2(void* dst, const void* a, const void* b,
                                                     size_t count) {
  reduceLoop<float, FuncSum>(dst, a, b, count);
}
__attribute__((target("avx2"))) void sumFloat32Avx2x2(void* dst1, void* dst2, const void* a,
                                                       const void* b, size_t count) {
  reduceLoop2<float, FuncSum>(dst1, dst2, a, b, count);
}
#endif

template <typename T>
HostReduceFns forOp(RedOp op) {
  switch (op) {
    case RedOp::kSum: return {reduceLoop<T, FuncSum>, reduceLoop2<T, FuncSum>};
    case RedOp::kProd: return {reduceLoop<T, FuncProd>, reduceLoop2<T, FuncProd>};
    case RedOp::kMax: return {reduceLoop<T, FuncMax>, reduceLoop2<T, FuncMax>};
    case RedOp::kMin: return {reduceLoop<T, FuncMin>, reduceLoop2<T, FuncMin>};
    default: return {};
  }
}

HostReduceFns float32Fns(RedOp op) {
#if defined(__x86_64__)
  if (op == RedOp::kSum && __builtin_cpu_supports("avx2")) {
    return {sumFloat32Avx2, sumFloat32Avx2x2};
  }
#endif
  return forOp<float>(op);
}

HostReduceFns lookup(DataType type, RedOp op) {
  switch (type) {
    case DataType::kInt8: return forOp<int8_t>(op);
    case DataType::kUint8: return forOp<uint8_t>(op);
    case DataType::kInt32: return forOp<int32_t>(op);
    case DataType::kUint32: return forOp<uint32_t>(op);
    case DataType::kInt64: return forOp<int64_t>(op);
    case DataType::kUint64: return forOp<uint64_t>(op);
    case DataType::kFloat32: return float32Fns(op);
    case DataType::kFloat64: return forOp<double>(op);
    default: return {};
  }
}

}  // namespace

Result<HostReduceFns> hostReduceFns(DataType type, RedOp op) {
  HostReduceFns fns = lookup(type, op);
  if (fns.reduce == nullptr) {
    return invalidUsage(std::string("reduction of ") + dataTypeName(type) + " with op " +
                        redOpName(op) + " is not implemented yet in braid");
  }
  return fns;
}

Result<HostReduceFn> hostReduceFn(DataType type, RedOp op) {
  BRAID_ASSIGN_OR_RETURN(HostReduceFns fns, hostReduceFns(type, op));
  return fns.reduce;
}

void copyTwice(void* dst1, void* dst2, const void* src, size_t bytes) {
  // 8-byte words while they last (vectorized by the compiler), then bytes.
  const size_t words = bytes / 8;
  auto* d1 = static_cast<unsigned char*>(dst1);
  auto* d2 = static_cast<unsigned char*>(dst2);
  const auto* s = static_cast<const unsigned char*>(src);
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    memcpy(&w, s + 8 * i, 8);
    memcpy(d1 + 8 * i, &w, 8);
    memcpy(d2 + 8 * i, &w, 8);
  }
  for (size_t i = words * 8; i < bytes; ++i) d1[i] = d2[i] = s[i];
}

}  // namespace braid::kernels
