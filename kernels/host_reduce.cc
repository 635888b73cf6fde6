// The table of host reduction loops, one instantiation per (type, op).
//
// The loops are written so that GCC vectorizes them (restrict-free element
// loops over a contiguous range with a simple functor); the aliasing cases
// (dst == a) are legal because each element is read before it is written.
// float32 sum, the hottest pair, has an explicit AVX2 path selected at run
// time so the library still runs on CPUs without AVX2.
#include "kernels/host_reduce.h"

#include <cstdint>
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

#if defined(__x86_64__)
__attribute__((target("avx2"))) void sumFloat32Avx2(void* dst, const void* a, const void* b,
                                                     size_t count) {
  float* d = static_cast<float*>(dst);
  const float* x = static_cast<const float*>(a);
  const float* y = static_cast<const float*>(b);
  // The target attribute lets GCC emit 256-bit loads/adds for this loop; it
  // unrolls it on -O3. Same rounding as the scalar loop: one add per element.
  for (size_t i = 0; i < count; ++i) d[i] = x[i] + y[i];
}
#endif

HostReduceFn sumFloat32() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) return sumFloat32Avx2;
#endif
  return reduceLoop<float, FuncSum>;
}

template <typename T>
HostReduceFn forOp(RedOp op) {
  switch (op) {
    case RedOp::kSum: return reduceLoop<T, FuncSum>;
    case RedOp::kProd: return reduceLoop<T, FuncProd>;
    case RedOp::kMax: return reduceLoop<T, FuncMax>;
    case RedOp::kMin: return reduceLoop<T, FuncMin>;
    default: return nullptr;
  }
}

HostReduceFn lookup(DataType type, RedOp op) {
  switch (type) {
    case DataType::kInt8: return forOp<int8_t>(op);
    case DataType::kUint8: return forOp<uint8_t>(op);
    case DataType::kInt32: return forOp<int32_t>(op);
    case DataType::kUint32: return forOp<uint32_t>(op);
    case DataType::kInt64: return forOp<int64_t>(op);
    case DataType::kUint64: return forOp<uint64_t>(op);
    case DataType::kFloat32: return op == RedOp::kSum ? sumFloat32() : forOp<float>(op);
    case DataType::kFloat64: return forOp<double>(op);
    default: return nullptr;
  }
}

}  // namespace

Result<HostReduceFn> hostReduceFn(DataType type, RedOp op) {
  HostReduceFn fn = lookup(type, op);
  if (fn == nullptr) {
    return invalidUsage(std::string("reduction of ") + dataTypeName(type) + " with op " +
                        redOpName(op) + " is not implemented yet in braid");
  }
  return fn;
}

}  // namespace braid::kernels
