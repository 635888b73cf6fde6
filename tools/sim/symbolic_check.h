// Runs every rank's schedule together on symbolic values and proves that
// each rank ends with the right data (symbolic_value.h says why the proof
// holds with overwhelming probability).
//
// It follows the executors (src/exec): steps with count 0 are skipped on
// both sides; an agent (one rank's channel) runs its steps in order, moving
// each in slices of the rank's sliceElems; each connection is a FIFO of
// kFifoSlots slots, one slice each. A slice needs its incoming slice and a
// free outgoing slot. Agents run until they block; a slice that frees what
// another agent waits for wakes that agent, so the work is proportional to
// the slices moved, not to ranks times rounds. When nothing can move and
// some agent has not finished, that is a deadlock on the real FIFOs too,
// and the report names where each stuck agent waits and the cycle of waits.
#pragma once

#include <cstdint>

#include "braid/status.h"
#include "compact_schedule.h"

namespace braid::sim {

struct CheckOptions {
  bool inPlace = false;
  uint64_t seed = 0x5eedb7a1d;  ///< draws the ranks' keys
  int maxReports = 8;           ///< stuck agents or wrong ranks named in a failure
};

struct CheckStats {
  uint64_t slices = 0;           ///< slices moved
  uint64_t stepsRun = 0;         ///< non-empty steps run
  uint64_t ranksChecked = 0;     ///< outputs compared (all but reduce's non-roots)
  uint64_t elementsChecked = 0;  ///< output elements compared, over all ranks
  uint64_t memoryIntervals = 0;  ///< intervals all outputs held at the end
};

/// OK with statistics if every rank finished with the right output; an error
/// naming the first problems otherwise (a deadlock, a slice size the two
/// ends disagree on, an access outside a buffer, elements reduced with other
/// elements, slices never received, a wrong output).
Result<CheckStats> checkSymbolically(const ScheduleSet& set, const CheckOptions& options);

}  // namespace braid::sim
