// The engine kernels of float16 and bfloat16 (engine_kernel.cuh).
#include "kernels/engine_kernel.cuh"

namespace braid::kernels::detail {
namespace {
template <typename T>
struct Halves
    : std::bool_constant<std::is_same<T, Float16>::value || std::is_same<T, Bfloat16>::value> {};
}  // namespace

const void* engineKernelHalves(DataType type, RedOp op) {
  return engineKernelInGroup<Halves>(type, op);
}

}  // namespace braid::kernels::detail
