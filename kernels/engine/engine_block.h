// One block of an engine launch: the body of the CUDA kernel
// (kernels/engine_kernel.cu) and of its CPU instance on the emulated GPU
// (kernels/engine_host.cc), so the two run the same code.
//
// There is one kernel per (datatype, operator): it runs the calls that
// reduce with that pair through TeamLoops, and calls that only move data
// through CopyLoops. One kernel per pair rather than one kernel that
// dispatches on the pair at run time: ptxas's time grew faster than the
// number of pairs a kernel could call (an hour for all 72), and 72 small
// kernels compile in seconds each.
//
// The block walks the launch's calls in order. For each call it has a
// channel in, it loads the channel's cursors, runs the interpreter, and
// stores the cursors; a one-shot all-reduce runs on one block instead
// (one_shot.h), and a symmetric call on its blocks reads and writes its
// peers' windows (symmetric.h). The first fault ends the block and is recorded for
// the host to read (ncclCommGetAsyncError); the other blocks see it in
// their waits and end too.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/engine/device_env.h"
#include "kernels/engine/elementwise.h"
#include "kernels/engine/interpreter.h"
#include "kernels/engine/launch.h"
#include "kernels/engine/one_shot.h"
#include "kernels/engine/symmetric.h"
#include "kernels/host_device.h"

namespace braid::kernels::engine {

template <typename Team, typename Loops>
BRAID_HOST_DEVICE Fault runChannel(const Team& team, const Loops& loops, const EngineArgs& args,
                                   uint32_t callIndex, uint32_t block) {
  const EngineCall& call = args.calls[callIndex];
  const DeviceChannel& channel = call.channels[block - call.firstBlock];
  DeviceEnv<Team, Loops> env(team, loops, channel, args, static_cast<FifoProtocol>(call.protocol),
                             callIndex, block);
  Fault f = env.begin();
  if (!failed(f)) {
    f = runInstructions(env, channel.instrs, channel.ninstrs, call.sliceElems, call.elemBytes,
                        static_cast<const char*>(call.input), static_cast<char*>(call.output));
  }
  env.end();
  return f;
}

/// Block `block` of a launch of the kernel for (T, O), O a dispatch.h OpTag.
template <typename Team, typename T, typename O>
BRAID_HOST_DEVICE void runEngineBlock(const Team& team, const EngineArgs& args, uint32_t block) {
  using Pre = typename O::template Pre<T>;
  using Func = typename O::template Func<T>;
  using Post = typename O::template Post<T>;
  using Loops = TeamLoops<T, Pre, Func, Post, Team>;
  for (uint32_t c = 0; c < args.ncalls; ++c) {
    const EngineCall& call = args.calls[c];
    if (block < call.firstBlock || block - call.firstBlock >= call.nchannels) continue;
    Fault f = noFault();
    const bool symmetric = call.kind == static_cast<uint8_t>(CallKind::kSymmetric);
    if (call.copyOnly != 0 && !symmetric) {
      f = runChannel(team, CopyLoops<Team>{team, call.elemBytes}, args, c, block);
    } else if (call.copyOnly == 0 &&
               (call.type != args.type || call.op != args.op || call.elemBytes != sizeof(T))) {
      f = {FaultCode::kBadCall, -1, call.type, args.type};
    } else {
      OpArgs opArgs = call.args;
      if (call.scalarPointer != nullptr) memcpy(opArgs.scalar, call.scalarPointer, sizeof(T));
      if (symmetric) {
        f = runSymmetric<T, Pre, Func, Post>(team, opArgs, args, call, block);
      } else if (call.oneShot != nullptr) {
        f = runOneShot<T, Pre, Func, Post>(team, opArgs, args, call);
      } else {
        f = runChannel(team, Loops{team, opArgs}, args, c, block);
      }
    }
    if (failed(f)) {
      if (team.leader()) recordFault(args.fault, f, block, c);
      break;
    }
  }
  // For the flight recorder: this block is past the launch (done or given up).
  if (team.leader() && args.waits != nullptr && block < kMaxWaitRecords) {
    storeRelaxed(&args.waits[block].done, args.launchSeq);
  }
}

}  // namespace braid::kernels::engine
