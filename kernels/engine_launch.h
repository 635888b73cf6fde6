// The engine's kernels as a launch names them: for each (datatype,
// operator), the CUDA kernel and the same block body compiled for the CPU,
// which the emulated GPU runs in its place (emulation/gpu/emulated_runtime.cc). Both
// take one engine::EngineArgs (kernels/engine/launch.h) whose type and op
// are the pair, and run one block of the launch.
#pragma once

#include "braid/types.h"

namespace braid::kernels {

namespace engine {
class ThreadTeam;  // kernels/engine/thread_team.h: one thread of a block on the CPU
}  // namespace engine

/// One thread of one block on the CPU: the block's team (its threads share `team`'s BlockState).
using EngineHostBlock = void (*)(const void* args, unsigned block, unsigned blocks,
                                 const engine::ThreadTeam& team);

struct EngineKernel {
  /// The __global__ function as cudaLaunchKernel takes it; null when braid
  /// is built without CUDA.
  const void* device = nullptr;
  /// One thread of a block on the CPU, as the emulated GPU runs it.
  EngineHostBlock host = nullptr;
};

/// The kernel for launches whose reducing calls use (type, op); both
/// members null for values outside the enums.
EngineKernel engineKernelFor(DataType type, RedOp op);

/// Threads per block of the CUDA kernels.
unsigned engineThreadsPerBlock();

namespace detail {
/// The device half of engineKernelFor (engine_kernel.cu; null without CUDA).
const void* engineDeviceKernelFor(DataType type, RedOp op);
}  // namespace detail

}  // namespace braid::kernels
