// Launching the engine's kernel for an EngineArgs built by a test, through a gpu::Runtime (the
// emulated GPU or a real one), as GpuSide::flush (src/comm/gpu_launch.cc) does for communicators.
#pragma once

#include "braid/status.h"
#include "braid/types.h"
#include "gpu/runtime.h"
#include "kernels/engine/launch.h"
#include "kernels/engine_launch.h"

namespace braid::testing {

/// Enqueues `blocks` blocks of the kernel for `args`' (type, op) on `stream`; the runtime copies
/// `args`, so it may go once this returns.
inline Status launchEngine(gpu::Runtime& rt, const kernels::engine::EngineArgs& args,
                           unsigned blocks, gpu::Stream stream) {
  const kernels::EngineKernel k =
      kernels::engineKernelFor(static_cast<DataType>(args.type), static_cast<RedOp>(args.op));
  gpu::Launch l;
  l.deviceFunction = k.device;
  l.hostFunction = k.host;
  l.args = &args;
  l.argBytes = kernels::engine::engineArgsBytes(args.ncalls);
  l.paramBytes = sizeof args;
  l.blocks = blocks;
  l.threadsPerBlock = kernels::engineThreadsPerBlock();
  return rt.launch(l, stream);
}

}  // namespace braid::testing
