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
//
// This is braid's one model of schedules on FIFOs: braid-sim runs it at
// thousands of ranks (checkSymbolically), and the generators' unit tests in
// tests/unit run it on buffers they lay out themselves (checkOnBuffers),
// through the braid_sim_model library.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "braid/status.h"
#include "compact_schedule.h"
#include "rank_memory.h"
#include "symbolic_value.h"

namespace braid::sim {

struct CheckOptions {
  /// checkSymbolically's call (checkOnBuffers' layouts say it themselves)
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
/// elements, slices never received, a wrong output). Each rank's buffers
/// are as NCCL lays them out for set.collective (layoutOf), and each output
/// is compared with expectedOutput.
Result<CheckStats> checkSymbolically(const ScheduleSet& set, const CheckOptions& options);

/// What `rank`'s output must hold at the end, in the ranks' `keys`; nullopt
/// leaves it unchecked.
using ExpectedOutput = std::function<std::optional<Value>(int rank, const RankKeys& keys)>;

/// The same run on buffers the caller lays out, for layouts and outputs that
/// checkSymbolically does not know (variable block counts, a reduce whose
/// non-root outputs must stay untouched). Rank r's buffers are layouts[r]:
/// its input holds element i of r's contribution at position i, and its
/// memory outside the input holds nothing (unwritten), so an output position
/// no step writes ends unwritten. Fails also on a layout outside its memory
/// and on an output of another length than expected.
Result<CheckStats> checkOnBuffers(const ScheduleSet& set, const std::vector<BufferLayout>& layouts,
                                  const ExpectedOutput& expected, const CheckOptions& options);

/// checkOnBuffers for every rank's schedule, in rank order (makeScheduleSet):
/// how the unit tests of the generators call it.
Result<CheckStats> checkOnBuffers(const std::vector<algo::Schedule>& schedules,
                                  const std::vector<BufferLayout>& layouts,
                                  const ExpectedOutput& expected, const CheckOptions& options = {});

}  // namespace braid::sim
