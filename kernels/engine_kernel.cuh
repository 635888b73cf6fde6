// The engine's CUDA kernels, one per (datatype, operator): one block per
// channel runs the interpreter with the block's threads as its team
// (kernels/engine/engine_block.h), the same code the emulated GPU runs on
// the CPU.
//
// The kernels of each group of datatypes are compiled in a translation unit
// of their own (engine_kernels_*.cu, which define BRAID_ENGINE_TYPES to the
// group before including this file), so a parallel build compiles them at
// once; engine_kernels_dispatch.cu asks each group in turn.
//
// The parameter is __grid_constant__: blocks read it in place, and the
// interpreter takes references into it without a copy to local memory.
#pragma once

#include <type_traits>

#include "kernels/dispatch.h"
#include "kernels/engine/engine_block.h"
#include "kernels/engine/team.h"
#include "kernels/engine_launch.h"

namespace braid::kernels::detail {

template <typename T, typename O>
__global__ void __launch_bounds__(engine::kEngineThreads, engine::kEngineMinBlocksPerSm)
    engineKernel(const __grid_constant__ engine::EngineArgs args) {
  engine::runEngineBlock<engine::BlockTeam, T, O>(engine::BlockTeam{}, args, blockIdx.x);
}

/// The kernel for (type, op) if `type` is in the group InGroup accepts, else null.
template <template <typename> class InGroup>
const void* engineKernelInGroup(DataType type, RedOp op) {
  return dispatchTypeAndOp(type, op, static_cast<const void*>(nullptr), [](auto t, auto o) {
    using T = typename decltype(t)::Type;
    if constexpr (InGroup<T>::value) {
      return reinterpret_cast<const void*>(&engineKernel<T, decltype(o)>);
    } else {
      return static_cast<const void*>(nullptr);
    }
  });
}

const void* engineKernelIntegers(DataType type, RedOp op);
const void* engineKernelWide(DataType type, RedOp op);
const void* engineKernelHalves(DataType type, RedOp op);
const void* engineKernelFp8(DataType type, RedOp op);

}  // namespace braid::kernels::detail
