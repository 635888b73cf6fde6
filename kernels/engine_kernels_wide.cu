// The engine kernels of the 64-bit integers, float and double (engine_kernel.cuh).
#include "kernels/engine_kernel.cuh"

namespace braid::kernels::detail {
namespace {
template <typename T>
struct Wide : std::bool_constant<(std::is_integral<T>::value && sizeof(T) == 8) ||
                                 std::is_floating_point<T>::value> {};
}  // namespace

const void* engineKernelWide(DataType type, RedOp op) {
  return engineKernelInGroup<Wide>(type, op);
}

}  // namespace braid::kernels::detail
