// Schedules are data: what one rank does in one collective, as a list of
// Steps per channel, that an executor (host or CUDA) interprets.
//
// The step vocabulary is NCCL's primitives. "input" is the caller's send
// buffer, "output" its receive buffer; "recv" takes the next message from
// the connection to recvPeer, "send" puts one on the connection to sendPeer.
// Every step covers `count` elements at inOffset / outOffset; the executor
// moves them in slices of at most sliceElems, the same split on both sides of
// a connection, so the k-th slice sent is the k-th slice received.
//
// A step's local operand is normally the input at inOffset; with fromOutput
// it is what the rank already holds in its output at outOffset (a tree node
// adding its second child to the first child's partial result, or passing
// on what it has received). Such values have been through the operator's
// pre already, so the executor does not apply it again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "braid/status.h"
#include "braid/types.h"
#include "kernels/engine/step.h"

namespace braid::algo {

// The step vocabulary is the engine's (kernels/engine/step.h), so the
// generators and the interpreter that runs their steps share one definition.
using kernels::engine::StepOp;
using kernels::engine::stepReadsLocal;
using kernels::engine::stepReceives;
using kernels::engine::stepReduces;
using kernels::engine::stepSends;
using kernels::engine::stepWritesOutput;

const char* stepOpName(StepOp op);

struct Step {
  StepOp op;
  int recvPeer;             ///< rank received from, -1 if none
  int sendPeer;             ///< rank sent to, -1 if none
  int chunk;                ///< which of the round's chunks (for reading dumps)
  size_t inOffset;          ///< first input element
  size_t outOffset;         ///< first output element
  size_t count;             ///< elements; 0 means the step moves nothing on both sides
  bool fromOutput = false;  ///< local operand is output[outOffset..], already loaded
};

/// A step between two ranks: recvPeer is `from` if `op` receives and sendPeer
/// `to` if it sends, -1 otherwise, so generators pass their neighbours whatever
/// the op. Ring and tree generators build every step through it.
inline Step makeStep(StepOp op, int from, int to, int chunk, size_t inOffset, size_t outOffset,
                     size_t count, bool fromOutput = false) {
  Step step{};
  step.op = op;
  step.recvPeer = stepReceives(op) ? from : -1;
  step.sendPeer = stepSends(op) ? to : -1;
  step.chunk = chunk;
  step.inOffset = inOffset;
  step.outOffset = outOffset;
  step.count = count;
  step.fromOutput = fromOutput;
  return step;
}

inline bool stepReadsInput(const Step& step) { return stepReadsLocal(step.op) && !step.fromOutput; }
inline bool stepReadsOutput(const Step& step) { return stepReadsLocal(step.op) && step.fromOutput; }

/// What every generator takes besides its own options: the ranks, the
/// elements, and how the work is cut into chunks (one message) and slices
/// (one FIFO slot).
struct ScheduleSizes {
  int nranks = 1;
  int rank = 0;
  size_t count = 0;          ///< elements per rank (per block for reduce-scatter, all-gather)
  size_t chunkElems = 1;     ///< most elements one message holds
  size_t maxSliceElems = 1;  ///< most elements of one slice (one FIFO slot)
  size_t minSliceElems = 1;  ///< fewest elements worth a slice of their own
  int nchannels = 1;
  /// Elements that every bound between channels, chunks and slices falls on a multiple of
  /// (from the call's first element), so that every part but the last starts and ends on a
  /// 16-byte pack where the buffer does (sizeForSlots sets it; the engine's loops move packs
  /// only where all of a loop's pointers agree within 16 bytes). Divides chunkElems and
  /// maxSliceElems.
  size_t grainElems = 1;
};

/// n rounded up to a multiple of grain.
inline size_t roundUpTo(size_t n, size_t grain) { return (n + grain - 1) / grain * grain; }

/// Checks what every generator needs of its sizes: a rank in [0, nranks),
/// at least one channel, chunks and slices of at least one element.
/// Messages start with `who` ("ring all_reduce: ").
Status checkSizes(const ScheduleSizes& sizes, const std::string& who);
/// Checks the root of a broadcast or reduce.
Status checkRoot(const ScheduleSizes& sizes, int root, const std::string& who);

/// Below this a slice's hand-off (two cache-line transfers, ~0.2 us) costs
/// more than the copy it would overlap (16 KiB at ~10 GB/s is ~1.6 us).
inline constexpr size_t kMinSliceBytes = 16 << 10;

/// The communicator's chunk and slice sizes for FIFO slots of `slotBytes`
/// and elements of `elemBytes`: a chunk fills half the FIFO (so a step
/// never waits on the receiver's room for its first slice, and the other
/// half lets the next round start early), a slice at most one slot and,
/// where the slot allows, at least kMinSliceBytes; bounds on 16-byte packs
/// where the slot holds whole packs. braid-sim sizes its schedules with the
/// same rule.
void sizeForSlots(ScheduleSizes& sizes, size_t slotBytes, size_t fifoSlots, size_t elemBytes);

struct ChannelSchedule {
  std::vector<Step> steps;
  std::vector<int> ring;  ///< ring order of this channel (ring schedules), for dumps
};

struct Schedule {
  Collective collective = Collective::kAllReduce;
  int rank = 0;
  int nranks = 1;
  int root = -1;          ///< root of broadcast and reduce, -1 for the others
  size_t count = 0;       ///< elements of the collective (per rank, as the API counts)
  size_t sliceElems = 0;  ///< largest slice an executor moves at once
  size_t chunkElems = 0;  ///< most elements of one chunk (one message), for dumps
  std::vector<ChannelSchedule> channels;
};

/// A Schedule whose header comes from `sizes` and the call, with
/// sizes.nchannels channels without steps.
Schedule newSchedule(const ScheduleSizes& sizes, Collective collective, int root);

/// A readable listing of the schedule (BRAID_DUMP_SCHEDULE=1).
std::string formatSchedule(const Schedule& schedule, DataType type);

}  // namespace braid::algo
