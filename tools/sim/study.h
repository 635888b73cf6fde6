// What braid-sim does with a collective: check it, time it, sweep its sizes.
// Each study generates the schedules it needs (generate.h) and hands them
// to the checker or the event simulation; main.cc only parses and prints.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "algo/algorithm.h"
#include "braid/status.h"
#include "braid/types.h"
#include "compact_schedule.h"
#include "event_sim.h"
#include "generate.h"
#include "machine.h"
#include "symbolic_check.h"

namespace braid::sim {

struct Study {
  Collective collective = Collective::kAllReduce;
  algo::Algorithm algorithm = algo::Algorithm::kRing;
  algo::Protocol protocol = algo::Protocol::kSimple;
  int nranks = 16;
  int nchannels = 1;
  int root = 0;
  uint64_t bytes = 0;          ///< nccl-tests' size of the call
  size_t elemBytes = 4;        ///< float32
  size_t fifoBytes = 4 << 20;  ///< BRAID_BUFFSIZE: sizes chunks and slices
  Machine machine;
  int threads = 0;  ///< for generating schedules; 0 = all cores
};

/// Elements per rank the generators get for nccl-tests' `bytes`: the whole
/// buffer for all-reduce, broadcast and reduce, a rank's block (bytes / N)
/// for reduce-scatter and all-gather.
uint64_t countFor(Collective collective, uint64_t bytes, size_t elemBytes, int nranks);

/// nccl-tests' bus bandwidth factor: busbw = algbw * factor.
double busFactor(Collective collective, int nranks);

/// The schedules of a timed call, sized as the communicator sizes them.
ScheduleSpec timingSpec(const Study& study);

/// The sizes the symbolic check runs with. A check's cost is its slices,
/// not its elements (symbolic values cover runs of elements), so it takes a
/// few elements per chunk: several slices per step, several rounds and a
/// short last round at up to 1024 ranks, and one slice per step beyond,
/// where a ring all-reduce already moves 2N^2 slices (33.5M at 4096 ranks).
struct CheckShape {
  uint64_t count = 0;
  size_t chunkElems = 0;
  size_t sliceElems = 0;
};
CheckShape defaultCheckShape(Collective collective, algo::Algorithm algorithm, int nranks);
ScheduleSpec checkSpec(const Study& study, const CheckShape& shape);

struct TimedCall {
  TimingResult timing;
  uint64_t steps = 0;        ///< steps of all ranks
  uint64_t runs = 0;         ///< runs they compress to
  double algBytesPerUs = 0;  ///< bytes / time
  double busBytesPerUs = 0;
  std::optional<double> modelUs;  ///< the cost model's prediction, if it has one
};

/// Generates and simulates one call (with a trace for drawing if asked).
Result<TimedCall> timeCall(const Study& study, bool trace);

struct SweepRow {
  uint64_t bytes = 0;
  double ringUs = 0;
  double treeUs = 0;
  std::optional<double> ringModelUs;
  std::optional<double> treeModelUs;
};

/// Ring and tree at every power of two from minBytes to maxBytes; `onRow`,
/// if given, sees each row as soon as it is done.
Result<std::vector<SweepRow>> sweepRingTree(
    const Study& study, uint64_t minBytes, uint64_t maxBytes,
    const std::function<void(const SweepRow&)>& onRow = nullptr);

/// The smallest swept size from which the ring is never slower than the
/// tree, by the simulation (or by the model when `byModel`); empty if the
/// tree wins at the largest size. 0 if the ring wins everywhere.
std::optional<uint64_t> crossover(const std::vector<SweepRow>& rows, bool byModel);

}  // namespace braid::sim
