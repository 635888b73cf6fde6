// engineKernelFor's device half: the kernel of (type, op) from whichever
// group compiled it (engine_kernel.cuh).
#include "kernels/engine_kernel.cuh"

namespace braid::kernels::detail {

const void* engineDeviceKernelFor(DataType type, RedOp op) {
  for (auto group : {engineKernelIntegers, engineKernelWide, engineKernelHalves, engineKernelFp8}) {
    if (const void* k = group(type, op)) return k;
  }
  return nullptr;
}

}  // namespace braid::kernels::detail
