// The engine kernels of the two fp8 formats (engine_kernel.cuh).
#include "kernels/engine_kernel.cuh"

namespace braid::kernels::detail {
namespace {
template <typename T>
struct Fp8
    : std::bool_constant<std::is_same<T, Float8e4m3>::value || std::is_same<T, Float8e5m2>::value> {
};
}  // namespace

const void* engineKernelFp8(DataType type, RedOp op) { return engineKernelInGroup<Fp8>(type, op); }

}  // namespace braid::kernels::detail
