// The step vocabulary of schedules (NCCL's primitives) and the instruction
// the engine runs for each step.
//
// src/algo's generators emit algo::Step values, which name peers by rank
// and exist to be printed, simulated and checked. Before a schedule runs,
// exec/ turns each into an Instruction: the same operation and ranges, the
// peers replaced by the ports of the place that runs it (a connection per
// peer on the CPU, a FIFO descriptor on the GPU), plus which call of a
// launch it belongs to. Both use the StepOp below and its predicates, so
// the interpreter and the generators cannot disagree on what a step does.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace braid::kernels::engine {

enum class StepOp : uint8_t {
  kSend,                ///< send input
  kRecv,                ///< recv into output
  kCopy,                ///< output = input (a rank alone)
  kCopySend,            ///< output = input, and send it
  kRecvReduceSend,      ///< send op(recv, input)
  kRecvReduceCopy,      ///< output = op(recv, input)
  kRecvReduceCopySend,  ///< output = op(recv, input), and send it
  kRecvCopySend,        ///< output = recv, and send it
};

BRAID_HOST_DEVICE bool stepReceives(StepOp op) {
  return op != StepOp::kSend && op != StepOp::kCopy && op != StepOp::kCopySend;
}
BRAID_HOST_DEVICE bool stepSends(StepOp op) {
  return op == StepOp::kSend || op == StepOp::kCopySend || op == StepOp::kRecvReduceSend ||
         op == StepOp::kRecvReduceCopySend || op == StepOp::kRecvCopySend;
}
BRAID_HOST_DEVICE bool stepReduces(StepOp op) {
  return op == StepOp::kRecvReduceSend || op == StepOp::kRecvReduceCopy ||
         op == StepOp::kRecvReduceCopySend;
}
/// Whether the step reads a local operand (the input, or the output with fromOutput).
BRAID_HOST_DEVICE bool stepReadsLocal(StepOp op) {
  return op != StepOp::kRecv && op != StepOp::kRecvCopySend;
}
BRAID_HOST_DEVICE bool stepWritesOutput(StepOp op) {
  return op != StepOp::kSend && op != StepOp::kRecvReduceSend;
}

/// What an instruction does: a schedule step, or the operator's post (avg's
/// division) over output this rank holds the final values of.
enum class InstrKind : uint8_t {
  kStep,
  kFinish,
};

/// No port: the step does not receive (recvPort) or send (sendPort).
inline constexpr uint16_t kNoPort = 0xffff;

/// One instruction of a channel. Offsets and counts are in elements of the
/// call's datatype.
struct Instruction {
  uint64_t inOffset;
  uint64_t outOffset;
  uint64_t count;  ///< 0: nothing to do on either side of the connection
  InstrKind kind;
  StepOp op;
  uint8_t fromOutput;  ///< the local operand is output[outOffset..], already loaded
  uint8_t reserved;
  uint16_t recvPort;  ///< kNoPort, or the port this step receives on
  uint16_t sendPort;  ///< kNoPort, or the port this step sends on
  uint32_t chunk;     ///< the schedule step's chunk, for traces and dumps
  uint16_t reserved2;
};
static_assert(sizeof(Instruction) == 40, "instructions are copied to the GPU as they are");

}  // namespace braid::kernels::engine
