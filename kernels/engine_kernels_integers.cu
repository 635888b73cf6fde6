// The engine kernels of the 8- and 32-bit integer types (engine_kernel.cuh).
#include "kernels/engine_kernel.cuh"

namespace braid::kernels::detail {
namespace {
template <typename T>
struct Integers : std::bool_constant<std::is_integral<T>::value && sizeof(T) <= 4> {};
}  // namespace

const void* engineKernelIntegers(DataType type, RedOp op) {
  return engineKernelInGroup<Integers>(type, op);
}

}  // namespace braid::kernels::detail
