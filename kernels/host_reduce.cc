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

#include "kernels/dispatch.h"

namespace braid::kernels {
namespace {

template <typename T, typename Func>
void reduceLoop(void* dst, const void* a, const void* b, size_t count) {
  T* d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  Func f;
  for (size_t i = 0; i < count; ++i) d[i] = f(x[i], y[i]);
}

template <typename T, typename Func>
void reduceLoop2(void* dst1, void* dst2, const void* a, const void* b, size_t count) {
  T* d1 = static_cast<T*>(dst1);
  T* d2 = static_cast<T*>(dst2);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  Func f;
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
  reduceLoop<float, FuncSum<float>>(dst, a, b, count);
}
__attribute__((target("avx2"))) void sumFloat32Avx2x2(void* dst1, void* dst2, const void* a,
                                                      const void* b, size_t count) {
  reduceLoop2<float, FuncSum<float>>(dst1, dst2, a, b, count);
}
#endif

HostReduceFns lookup(DataType type, RedOp op) {
#if defined(__x86_64__)
  if (type == DataType::kFloat32 && op == RedOp::kSum && __builtin_cpu_supports("avx2")) {
    return {sumFloat32Avx2, sumFloat32Avx2x2};
  }
#endif
  return dispatchTypeAndOp(type, op, HostReduceFns{}, [](auto t, auto o) {
    using T = typename decltype(t)::Type;
    using F = typename decltype(o)::template Func<T>;
    return HostReduceFns{reduceLoop<T, F>, reduceLoop2<T, F>};
  });
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

namespace {

// 8-byte words while they last (vectorized by the compiler), then bytes.
inline void copyWords(unsigned char* d, const unsigned char* s, size_t bytes) {
  const size_t words = bytes / 8;
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    memcpy(&w, s + 8 * i, 8);
    memcpy(d + 8 * i, &w, 8);
  }
  for (size_t i = words * 8; i < bytes; ++i) d[i] = s[i];
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void copyWordsAvx2(unsigned char* d, const unsigned char* s,
                                                   size_t bytes) {
  copyWords(d, s, bytes);
}
#endif

using CopyFn = void (*)(unsigned char*, const unsigned char*, size_t);

CopyFn pickCopy() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) return copyWordsAvx2;
#endif
  return copyWords;
}

}  // namespace

void copyBytes(void* dst, const void* src, size_t bytes) {
  static const CopyFn copy = pickCopy();
  copy(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), bytes);
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
