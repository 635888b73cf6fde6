// What each step does to one slice, written once for every place that runs
// steps. `Loops` is the place's copy and reduce loops: the host executor's
// HostOp loops (exec/host_executor.cc), or TeamLoops (elementwise.h) on the
// emulated GPU and in the CUDA kernel. `Team` separates two loops of one
// slice when the second reads what the first wrote, since on the GPU the
// threads of a block split the two loops differently.
//
// An operator is applied in the three places reduce_op.h names: load (pre)
// where a rank's own input leaves without being reduced, reduce where it
// meets a received partial result, combine where two values both loaded
// already meet (fromOutput: a tree node adding its second child to what it
// holds). Steps that read the output never apply pre again.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/engine/step.h"
#include "kernels/host_device.h"

namespace braid::kernels::engine {

/// The memory of one slice: the rank's input and output at the slice, and
/// the incoming and outgoing FIFO slots (null where the step has none).
struct SliceIo {
  const char* in;
  char* out;
  const char* recv;
  char* send;
  size_t bytes;
  size_t count;
};

template <typename Team, typename Loops>
BRAID_HOST_DEVICE void applySliceFromOutput(const Team& team, const Loops& l, StepOp op,
                                            const SliceIo& s) {
  switch (op) {
    case StepOp::kSend:
    case StepOp::kCopySend:  // the output onto itself, and send it
      l.copy(s.send, s.in, s.bytes);
      break;
    case StepOp::kRecvReduceSend:
      l.combine(s.send, s.recv, s.in, s.count);
      break;
    case StepOp::kRecvReduceCopy:
      l.combine(s.out, s.recv, s.in, s.count);
      break;
    case StepOp::kRecvReduceCopySend:
      l.combine(s.out, s.recv, s.in, s.count);
      team.sync();
      l.copy(s.send, s.out, s.bytes);
      break;
    case StepOp::kCopy:  // the output onto itself
    case StepOp::kRecv:  // no local operand: never fromOutput
    case StepOp::kRecvCopySend:
      break;
  }
}

/// The user memory that holds exactly the bytes step `op` sends for slice `s` once applied, or
/// null where only the outgoing slot will: a reduction sent on without being kept
/// (recvReduceSend), or the input sent through a load that is not a plain copy (`loadCopies`
/// false: premulsum's scalar). A transport that can send from there (SendEnd::lends) spares the
/// copy into the slot: with s.send pointed at this memory, every loop below writes it at most
/// once (the loops skip a copy onto itself and write a result kept and sent once).
BRAID_HOST_DEVICE const char* sentFromUser(StepOp op, bool fromOutput, bool loadCopies,
                                           const SliceIo& s) {
  switch (op) {
    case StepOp::kSend:
    case StepOp::kCopySend:
      return fromOutput || loadCopies ? s.in : nullptr;
    case StepOp::kRecvReduceCopySend:
    case StepOp::kRecvCopySend:
      return s.out;
    default:
      return nullptr;
  }
}

/// Applies step `op` to one slice. Steps that read the rank's input
/// without reducing it still apply pre (premulsum's scalar).
template <typename Team, typename Loops>
BRAID_HOST_DEVICE void applySlice(const Team& team, const Loops& l, StepOp op, bool fromOutput,
                                  const SliceIo& s) {
  if (fromOutput && stepReadsLocal(op)) {
    applySliceFromOutput(team, l, op, s);
    return;
  }
  switch (op) {
    case StepOp::kSend:
      l.load(s.send, s.in, s.count);
      break;
    case StepOp::kRecv:
      l.copyPeer(s.out, s.recv, s.bytes);
      break;
    case StepOp::kCopy:
      l.load(s.out, s.in, s.count);
      break;
    case StepOp::kCopySend:
      l.load(s.send, s.in, s.count);
      team.sync();  // in place, the second load overwrites what the first reads
      l.load(s.out, s.in, s.count);
      break;
    case StepOp::kRecvReduceSend:
      l.reduce(s.send, s.recv, s.in, s.count);
      break;
    case StepOp::kRecvReduceCopy:
      l.reduce(s.out, s.recv, s.in, s.count);
      break;
    case StepOp::kRecvReduceCopySend:
      l.reduce2(s.out, s.send, s.recv, s.in, s.count);
      break;
    case StepOp::kRecvCopySend:
      l.copyPeerTwice(s.out, s.send, s.recv, s.bytes);
      break;
  }
}

}  // namespace braid::kernels::engine
