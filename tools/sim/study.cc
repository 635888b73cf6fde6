#include "study.h"

#include <algorithm>

#include "cost_bridge.h"

namespace braid::sim {

uint64_t countFor(Collective collective, uint64_t bytes, size_t elemBytes, int nranks) {
  const uint64_t elements = bytes / elemBytes;
  if (collective == Collective::kReduceScatter || collective == Collective::kAllGather) {
    return elements / static_cast<uint64_t>(nranks);
  }
  return elements;
}

double busFactor(Collective collective, int nranks) {
  const double n = nranks;
  switch (collective) {
    case Collective::kAllReduce:
      return 2 * (n - 1) / n;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
      return 1;
  }
  return 1;
}

ScheduleSpec timingSpec(const Study& study) {
  ScheduleSpec spec;
  spec.collective = study.collective;
  spec.algorithm = study.algorithm;
  spec.nranks = study.nranks;
  spec.count = countFor(study.collective, study.bytes, study.elemBytes, study.nranks);
  spec.nchannels = study.nchannels;
  spec.root = study.root;
  sizeLikeCommunicator(spec, study.fifoBytes, study.elemBytes, study.protocol);
  return spec;
}

CheckShape defaultCheckShape(Collective collective, algo::Algorithm algorithm, int nranks) {
  const bool big = nranks > 1024;
  const uint64_t n = static_cast<uint64_t>(nranks);
  CheckShape s;
  if (algorithm == algo::Algorithm::kTree) {
    // 8 chunks per tree, of 4 slices (a tree slice is a quarter of a chunk),
    // the last one short.
    s.chunkElems = 8;
    s.sliceElems = 2;
    s.count = collective == Collective::kAllReduce ? 2 * 8 * 8 - 3 : 8 * 8 - 3;
    return s;
  }
  s.chunkElems = big ? 2 : 8;
  s.sliceElems = big ? 2 : 3;
  switch (collective) {
    case Collective::kAllReduce:
      // Big: one round of 2-element chunks, the last one short. Small: two
      // full rounds of 8-element chunks (4 slices each, the ring cuts a
      // slice to a quarter of a chunk) and a short third round.
      s.count = big ? 2 * n - 1 : 2 * 8 * n + 4 * n + 1;
      break;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      s.count = big ? 3 : 2 * 8 + 5;  // per block: rounds of a chunk, the last short
      break;
    case Collective::kBroadcast:
    case Collective::kReduce:
      s.count = 16 * s.chunkElems + 1;  // a chain of 17 chunks, the last of one element
      break;
  }
  return s;
}

ScheduleSpec checkSpec(const Study& study, const CheckShape& shape) {
  ScheduleSpec spec;
  spec.collective = study.collective;
  spec.algorithm = study.algorithm;
  spec.nranks = study.nranks;
  spec.count = shape.count;
  spec.nchannels = study.nchannels;
  spec.root = study.root;
  spec.chunkElems = shape.chunkElems;
  // A slice of exactly sliceElems (the generators would otherwise cut a
  // quarter of a chunk), unless the chunk is smaller.
  spec.maxSliceElems = shape.sliceElems;
  spec.minSliceElems = shape.sliceElems;
  return spec;
}

Result<TimedCall> timeCall(const Study& study, bool trace) {
  BRAID_ASSIGN_OR_RETURN(ScheduleSet set, generateSchedules(timingSpec(study), study.threads));
  TimingOptions options;
  options.protocol = study.protocol;
  options.elemBytes = study.elemBytes;
  options.trace = trace;
  TimedCall call;
  call.steps = set.steps;
  for (const AgentSchedule& a : set.agents) call.runs += a.runs.size();
  BRAID_ASSIGN_OR_RETURN(call.timing, simulateTiming(set, study.machine, options));
  if (call.timing.timeUs > 0) {
    call.algBytesPerUs = static_cast<double>(study.bytes) / call.timing.timeUs;
    call.busBytesPerUs = call.algBytesPerUs * busFactor(study.collective, study.nranks);
  }
  Result<double> model = predictUs(study.machine, study.collective, study.bytes, study.nranks,
                                   study.nchannels, study.algorithm, study.protocol);
  if (model.ok()) call.modelUs = model.value();
  return call;
}

Result<std::vector<SweepRow>> sweepRingTree(const Study& study, uint64_t minBytes,
                                            uint64_t maxBytes,
                                            const std::function<void(const SweepRow&)>& onRow) {
  if (minBytes == 0 || minBytes > maxBytes) {
    return invalidArgument("--sweep needs 0 < MIN <= MAX");
  }
  std::vector<SweepRow> rows;
  for (uint64_t bytes = minBytes; bytes <= maxBytes; bytes *= 2) {
    SweepRow row;
    row.bytes = bytes;
    for (algo::Algorithm algorithm : {algo::Algorithm::kRing, algo::Algorithm::kTree}) {
      Study s = study;
      s.algorithm = algorithm;
      s.bytes = bytes;
      BRAID_ASSIGN_OR_RETURN(TimedCall call, timeCall(s, false));
      const bool ring = algorithm == algo::Algorithm::kRing;
      (ring ? row.ringUs : row.treeUs) = call.timing.timeUs;
      (ring ? row.ringModelUs : row.treeModelUs) = call.modelUs;
    }
    rows.push_back(row);
    if (onRow) onRow(row);
    if (bytes > maxBytes / 2) break;  // the next doubling would pass maxBytes (or overflow)
  }
  return rows;
}

std::optional<uint64_t> crossover(const std::vector<SweepRow>& rows, bool byModel) {
  std::optional<uint64_t> from;  // first size of the ring's last winning streak
  bool treeWon = false;
  for (const SweepRow& row : rows) {
    double ring = row.ringUs, tree = row.treeUs;
    if (byModel) {
      if (!row.ringModelUs || !row.treeModelUs) return std::nullopt;
      ring = *row.ringModelUs;
      tree = *row.treeModelUs;
    }
    if (ring <= tree) {
      if (!from) from = row.bytes;
    } else {
      from.reset();
      treeWon = true;
    }
  }
  if (from && !treeWon) return 0;
  return from;
}

}  // namespace braid::sim
