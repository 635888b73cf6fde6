// What one launch of the engine receives: plain structs with pointers into
// memory the device addresses (a GPU's, or pinned host memory), the same on
// the emulated GPU and on a real one.
//
//   EngineArgs     the kernel's one parameter, by value: the abort word, the
//                  fault record, the deadline, and up to kMaxLaunchCalls
//                  calls, of which a launch passes only those it carries;
//                  one kernel per (datatype, operator) runs the calls that
//                  reduce with it and any call that only moves data
//   EngineCall     one collective (or one point-to-point transfer): buffers,
//                  datatype and operator, and the channels that run it on
//                  blocks firstBlock .. firstBlock + nchannels - 1; or a
//                  one-shot all-reduce on block firstBlock (one_shot.h), or a
//                  symmetric call on windows (symmetric.h)
//   DeviceChannel  one channel's instructions and ports, in device memory,
//                  made once per schedule (exec/gpu_program.cc)
//   DevicePort     one FIFO end: the FIFO, and where the end keeps its
//                  cursor between launches (in the rank's own memory)
//
// A call's channels run one protocol (FifoProtocol), and their ports are
// FIFOs of that protocol: Simple slots published by the tail counter
// (fifo.h), or LL slots of flagged cells (ll.h), which the LL channel
// stages through two slot-sized buffers of its own in device memory.
//
// Blocks run the calls in order, each skipping the calls it has no channel
// in; a communicator's launches are ordered with each other, so a FIFO's
// cursor is only ever used by one block at a time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/engine/fifo.h"
#include "kernels/engine/step.h"
#include "kernels/reduce_op.h"

namespace braid::kernels::engine {

/// Most ports per direction of one channel: the tree's parent and two
/// children use three.
inline constexpr uint32_t kMaxPorts = 8;
/// Most calls one launch carries (the kernel's parameter stays under CUDA's
/// 4 KiB); a group with more launches again. A batch of sends and receives
/// must fit one launch, since its transfers may wait for each other.
inline constexpr uint32_t kMaxLaunchCalls = 48;
/// Threads of a block.
inline constexpr unsigned kEngineThreads = 512;
/// Blocks of the engine kernel each multiprocessor must hold at once (__launch_bounds__'s
/// minimum), so that ranks sharing a GPU find room for each other's spinning blocks
/// (comm/gpu_channels.h).
inline constexpr unsigned kEngineMinBlocksPerSm = 1;
/// 32-bit registers of one multiprocessor (every architecture braid builds for, sm_70 on).
inline constexpr unsigned kSmRegisters = 65536;
/// The registers a thread of the engine kernel has, which the launch bounds above make ptxas
/// hold it to: 64. The loops (elementwise.h) are written to run in them without spilling, and
/// scripts/lib/ptxas_check.py fails where one spills or uses more.
inline constexpr unsigned kEngineRegisters =
    kSmRegisters / (kEngineThreads * kEngineMinBlocksPerSm);

/// How the slots of a call's FIFOs carry data; the values are algo::Protocol's.
enum class FifoProtocol : uint8_t {
  kSimple = 0,  ///< raw bytes, published by the tail counter (fifo.h)
  kLl = 1,      ///< 8-byte cells of flag and data (ll.h)
};

struct DevicePort {
  FifoRef fifo;        ///< LL: `slots` holds the cells, `slotBytes` the payload a slot carries
  FifoCursor* cursor;  ///< this end's cursor, saved between launches
  int32_t peer;        ///< the rank at the other end, for faults
  uint32_t flagBits;   ///< LL: cells carry sequence numbers modulo 2^flagBits; Simple: 0
};

struct DeviceChannel {
  const Instruction* instrs;
  uint64_t ninstrs;
  const DevicePort* recv;  ///< receiving ports, by Instruction::recvPort
  const DevicePort* send;  ///< sending ports, by Instruction::sendPort
  uint32_t nrecv;
  uint32_t nsend;
  /// LL programs: where the channel unpacks a received slot and packs the
  /// slot it sends, each as large as a slot's payload rounded up to a pack;
  /// null in Simple programs.
  char* llRecvStage;
  char* llSendStage;
};

struct OneShotBoard;   // one_shot.h
struct SymmetricCall;  // symmetric.h

/// What an EngineCall runs.
enum class CallKind : uint8_t {
  kEngine = 0,     ///< its channels' programs, or the one-shot all-reduce where oneShot is set
  kSymmetric = 1,  ///< a symmetric kernel on windows (symmetric.h)
};

struct EngineCall {
  const DeviceChannel* channels;  ///< null for a one-shot call
  uint32_t firstBlock;
  uint32_t nchannels;
  const void* input;
  void* output;
  uint64_t sliceElems;
  uint16_t elemBytes;
  uint8_t kind;  ///< CallKind
  uint8_t reserved;
  uint8_t type;      ///< braid::DataType
  uint8_t op;        ///< braid::RedOp of the functors (premulsum for user ops)
  uint8_t copyOnly;  ///< the collective does not reduce: any kernel runs it (CopyLoops)
  uint8_t protocol;  ///< FifoProtocol of the channels' ports
  OpArgs args;
  /// premulsum's scalar read when the call runs (ncclScalarDevice), or null
  /// when args.scalar holds it.
  const void* scalarPointer;
  union {
    /// A one-shot all-reduce: the rank's boards, and its element count in
    /// sliceElems; null for calls that run channels.
    const OneShotBoard* oneShot;
    /// A symmetric call (kind kSymmetric): its windows and the rank's barriers, and its
    /// element count (per rank for all_gather and reduce_scatter) in sliceElems.
    const SymmetricCall* symmetric;
  };
};
static_assert(sizeof(EngineCall) == 80, "EngineCall is part of the kernel's parameter");

/// Where the first block that stops writes why. `claim` decides which block
/// that is; `code` is published last, so a reader that sees it sees the rest.
struct FaultRecord {
  uint32_t claim;
  uint32_t code;  ///< FaultCode
  int32_t peer;
  uint32_t block;
  uint32_t call;
  uint32_t reserved;
  uint64_t got;
  uint64_t expected;
};

/// What one channel (host executor) or one block (kernel) waits for, for the flight recorder
/// (src/flight): written by the thread that waits, only when a wait did not succeed at once, and
/// cleared when it ends, so the fast path pays nothing. Read by the host without ordering: a
/// snapshot for a person, never for control.
enum class WaitKind : uint32_t { kNone = 0, kRecv = 1, kSend = 2 };
struct WaitRecord {
  uint32_t kind;     ///< WaitKind
  int32_t peer;      ///< the rank waited for
  uint32_t call;     ///< the call's index in its launch (kernels; 0 on the host)
  uint32_t instr;    ///< the instruction's index in its channel
  uint64_t sinceNs;  ///< clockNs() when the wait began
  uint64_t launch;   ///< kernels: EngineArgs::launchSeq of the launch that waits
  uint64_t done;     ///< kernels: the last launch this block finished
};
/// WaitRecords a GPU communicator keeps, one per block: blocks beyond it record nothing.
inline constexpr uint32_t kMaxWaitRecords = 256;

/// The calls come last, so that a launch passes only the bytes of the calls it carries
/// (engineArgsBytes): the parameter's declared size is the most a launch may carry, and CUDA
/// copies only what the launch gives (cuLaunchKernel's CU_LAUNCH_PARAM_BUFFER_SIZE), leaving the
/// rest undefined, so nothing reads calls[ncalls] and beyond.
struct EngineArgs {
  uint32_t ncalls;
  int32_t rank;
  /// The (datatype, operator) of the kernel launched: every call that
  /// reduces has them (engineKernelFor picks the kernel by them).
  uint8_t type;
  uint8_t op;
  uint8_t reserved[6];
  const uint32_t* abortFlag;  ///< nonzero: give up at once
  FaultRecord* fault;
  uint64_t timeoutNs;  ///< longest wait for one slot; 0 = none
  WaitRecord* waits;   ///< kMaxWaitRecords, by block (pinned, mapped); null: none kept
  uint64_t launchSeq;  ///< this launch's number on its communicator, from 1
  uint64_t reserved2;  ///< the calls start on 16 bytes
  EngineCall calls[kMaxLaunchCalls];
};

static_assert(sizeof(EngineArgs) <= 4096, "a kernel parameter is at most 4 KiB");
static_assert(offsetof(EngineArgs, calls) == 64, "the calls start on 16 bytes, after the header");

/// The bytes of EngineArgs a launch of `ncalls` calls passes: the header and those calls.
constexpr size_t engineArgsBytes(uint32_t ncalls) {
  return offsetof(EngineArgs, calls) + ncalls * sizeof(EngineCall);
}

}  // namespace braid::kernels::engine
