// The schedules braid-sim studies: every rank's, from the same generators
// the communicator calls (src/algo), compressed as they come.
#pragma once

#include <cstddef>

#include "algo/algorithm.h"
#include "braid/status.h"
#include "braid/types.h"
#include "compact_schedule.h"

namespace braid::sim {

struct ScheduleSpec {
  Collective collective = Collective::kAllReduce;
  algo::Algorithm algorithm = algo::Algorithm::kRing;
  int nranks = 1;
  size_t count = 0;  ///< elements per rank, as NCCL counts them for the collective
  int nchannels = 1;
  int root = 0;  ///< broadcast and reduce
  size_t chunkElems = 1;
  size_t maxSliceElems = 1;
  size_t minSliceElems = 1;
  bool deterministic = false;  ///< tree: both trees in the in-order shape
};

/// Chunk and slice sizes as the communicator picks them for a FIFO of
/// `fifoBytes` (kFifoSlots slots) and elements of `elemBytes`
/// (src/comm/calls.cc, src/comm/links.cc): a chunk is half the FIFO,
/// a slice at most one slot and, where the slot allows, at least 16 KiB;
/// LL's slots are at most 16 KiB (algo::sizeForSlots, the communicator's
/// own rule).
void sizeLikeCommunicator(ScheduleSpec& spec, size_t fifoBytes, size_t elemBytes,
                          algo::Protocol protocol);

/// Whether braid has a generator for this collective and algorithm.
Status checkSupported(Collective collective, algo::Algorithm algorithm);

/// One rank's schedule.
Result<algo::Schedule> generateRank(const ScheduleSpec& spec, int rank);

/// Every rank's schedule, compressed, with connections indexed. Uses up to
/// `threads` threads (0: as many as the machine has).
Result<ScheduleSet> generateSchedules(const ScheduleSpec& spec, int threads = 0);

}  // namespace braid::sim
