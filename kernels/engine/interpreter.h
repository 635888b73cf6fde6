// The step interpreter: runs one channel's instructions, slice by slice. The
// one loop every executor runs: the host executor on CPU buffers
// (exec/host_executor.cc), a block of the CUDA kernel (kernels/engine_kernel.cu)
// and a block of the emulated GPU's launch (kernels/engine_host.cc).
//
// A step moves its elements in slices of sliceElems, the same cut on both
// sides of a connection, so the k-th slice sent is the k-th slice received.
// For each slice the environment (`Env`) acquires the incoming slot (if the
// step receives) and the outgoing one (if it sends), the step's operation is
// applied straight between the user buffers and the slots, then the
// environment completes: it publishes the outgoing slot and releases the
// incoming one. The interpreter checks that what arrived is the slice it
// expects, so ranks calling different collectives or counts fail with a
// message instead of reading each other's bytes.
//
// An Env provides:
//   team()                         the threads of the channel (team.h)
//   acquire(instr, slice, last)    waits for the slots; fills slice.recv/send;
//                                  returns the same Fault on every thread
//   apply(op, fromOutput, slice)   the step's loops on the slice (slice_ops.h)
//   complete(instr, slice, last)   publishes and releases
//   finish(buf, count)             the operator's post over final output
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/engine/fifo.h"
#include "kernels/engine/slice_ops.h"
#include "kernels/engine/step.h"
#include "kernels/host_device.h"

namespace braid::kernels::engine {

enum class FaultCode : uint32_t {
  kNone = 0,
  kAborted,        ///< the communicator's abort flag was raised
  kTimedOut,       ///< a wait outlived the deadline
  kSliceMismatch,  ///< a slice of another size (or message length) arrived
  kNoPort,         ///< an instruction names a port its channel lacks
  kEnvError,       ///< the environment failed; it holds the details (host ports)
  kBadCall,        ///< a datatype or operator the engine has no loops for
};

/// Why a channel stopped, small enough to write into pinned memory from the GPU.
struct Fault {
  FaultCode code;
  int32_t peer;       ///< the rank waited for or received from; -1 if none
  uint64_t got;       ///< kSliceMismatch: the posted word (bytes | kLastSlice)
  uint64_t expected;  ///< kSliceMismatch: the word the receiver expected
};

BRAID_HOST_DEVICE Fault noFault() { return {FaultCode::kNone, -1, 0, 0}; }
BRAID_HOST_DEVICE bool failed(const Fault& f) { return f.code != FaultCode::kNone; }

/// The word a sender posts for a slice of `bytes`.
BRAID_HOST_DEVICE uint32_t sliceWord(size_t bytes, bool last) {
  return static_cast<uint32_t>(bytes) | (last ? kLastSlice : 0u);
}

/// Compares what arrived with what the receiver expects. `checkLast`: the
/// transport carries the last-slice mark (the engine's own FIFOs do; the
/// host transports' byte counts stop at the size).
BRAID_HOST_DEVICE Fault checkSlice(uint32_t posted, size_t bytes, bool last, bool checkLast,
                                   int peer) {
  const uint32_t want = sliceWord(bytes, last);
  const uint32_t got = checkLast ? posted : posted & ~kLastSlice;
  const uint32_t expect = checkLast ? want : want & ~kLastSlice;
  if (got == expect) return noFault();
  return {FaultCode::kSliceMismatch, peer, got, expect};
}

/// `base` moved on by `bytes`, or null for a null base: a buffer a call does not have (the
/// output of a rank that only sends, say) is null, and moving null on is undefined behaviour
/// in C++ even where nothing reads the result.
template <typename T>
BRAID_HOST_DEVICE T* byteOffset(T* base, size_t bytes) {
  return base == nullptr ? nullptr : base + bytes;
}

/// Runs `n` instructions over the call's buffers. Returns at the first fault.
template <typename Env>
BRAID_HOST_DEVICE Fault runInstructions(Env& env, const Instruction* instrs, size_t n,
                                        size_t sliceElems, size_t elemBytes, const char* input,
                                        char* output) {
  for (size_t i = 0; i < n; ++i) {
    const Instruction& ins = instrs[i];
    if (ins.count == 0) continue;  // both ends of the message skip it alike
    char* out = byteOffset(output, ins.outOffset * elemBytes);
    if (ins.kind == InstrKind::kFinish) {
      env.finish(out, ins.count);
      continue;
    }
    const char* in = ins.fromOutput ? out : byteOffset(input, ins.inOffset * elemBytes);
    for (size_t done = 0; done < ins.count; done += sliceElems) {
      SliceIo s{};
      s.count = ins.count - done < sliceElems ? ins.count - done : sliceElems;
      s.bytes = s.count * elemBytes;
      s.in = byteOffset(in, done * elemBytes);
      s.out = byteOffset(out, done * elemBytes);
      const bool last = done + s.count == ins.count;
      const Fault f = env.acquire(ins, s, last);
      if (failed(f)) return f;
      env.apply(ins.op, ins.fromOutput != 0, s);
      env.complete(ins, s, last);
    }
  }
  return noFault();
}

}  // namespace braid::kernels::engine
