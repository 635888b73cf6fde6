#include "generate.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "algo/ring.h"
#include "algo/tree.h"
#include "transport/connection.h"
#include "transport/shm/shm_ll_fifo.h"

namespace braid::sim {
namespace {

algo::ScheduleSizes sizes(const ScheduleSpec& spec, int rank) {
  algo::ScheduleSizes s;
  s.nranks = spec.nranks;
  s.rank = rank;
  s.count = spec.count;
  s.chunkElems = spec.chunkElems;
  s.maxSliceElems = spec.maxSliceElems;
  s.minSliceElems = spec.minSliceElems;
  s.nchannels = spec.nchannels;
  return s;
}

algo::RingParams ringParams(const ScheduleSpec& spec, int rank) {
  algo::RingParams p;
  static_cast<algo::ScheduleSizes&>(p) = sizes(spec, rank);
  return p;
}

algo::TreeParams treeParams(const ScheduleSpec& spec, int rank) {
  algo::TreeParams p;
  static_cast<algo::ScheduleSizes&>(p) = sizes(spec, rank);
  p.deterministic = spec.deterministic;
  return p;
}

// Ranks [begin, end) generated and compressed into `out`; the first
// failure is kept in `status`.
void generateRange(const ScheduleSpec& spec, int begin, int end, std::vector<CompressedRank>& out,
                   Status& status) {
  for (int rank = begin; rank < end; ++rank) {
    Result<algo::Schedule> schedule = generateRank(spec, rank);
    if (!schedule.ok()) {
      status = schedule.status();
      return;
    }
    out[rank - begin] = compressSchedule(schedule.value());
  }
}

}  // namespace

void sizeLikeCommunicator(ScheduleSpec& spec, size_t fifoBytes, size_t elemBytes,
                          algo::Protocol protocol) {
  // The communicator's slots: a share of the FIFO, cache-line aligned
  // (src/comm/links.cc), LL's capped (transport/shm/shm_ll_fifo.h).
  size_t slotBytes = fifoBytes / transport::kFifoSlots;
  slotBytes &= ~static_cast<size_t>(63);
  if (protocol == algo::Protocol::kLl)
    slotBytes = std::min(slotBytes, transport::shm::kLlSlotBytes);
  algo::ScheduleSizes s;
  algo::sizeForSlots(s, slotBytes, transport::kFifoSlots, elemBytes);
  spec.chunkElems = s.chunkElems;
  spec.maxSliceElems = s.maxSliceElems;
  spec.minSliceElems = s.minSliceElems;
}

Status checkSupported(Collective collective, algo::Algorithm algorithm) {
  if (algorithm == algo::Algorithm::kRing) return Status::success();
  if (algorithm == algo::Algorithm::kTree &&
      (collective == Collective::kAllReduce || collective == Collective::kBroadcast ||
       collective == Collective::kReduce)) {
    return Status::success();
  }
  return invalidArgument(std::string("braid has no ") +
                         (algorithm == algo::Algorithm::kTree ? "tree" : "such") +
                         " schedule for " + collectiveName(collective));
}

Result<algo::Schedule> generateRank(const ScheduleSpec& spec, int rank) {
  BRAID_TRY(checkSupported(spec.collective, spec.algorithm));
  if (spec.algorithm == algo::Algorithm::kTree) {
    return algo::treeSchedule(spec.collective, treeParams(spec, rank), spec.root);
  }
  return algo::ringSchedule(spec.collective, ringParams(spec, rank), spec.root);
}

Result<ScheduleSet> generateSchedules(const ScheduleSpec& spec, int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, spec.nranks);
  // Each thread compresses a contiguous range of ranks; they are then moved
  // into the set in rank order.
  std::vector<std::vector<CompressedRank>> parts(threads);
  std::vector<Status> statuses(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    const int begin = static_cast<int>(static_cast<long long>(spec.nranks) * t / threads);
    const int end = static_cast<int>(static_cast<long long>(spec.nranks) * (t + 1) / threads);
    parts[t].resize(end - begin);
    workers.emplace_back(generateRange, std::cref(spec), begin, end, std::ref(parts[t]),
                         std::ref(statuses[t]));
  }
  for (std::thread& w : workers) w.join();
  for (const Status& s : statuses) BRAID_TRY(s);
  ScheduleSet set;
  for (auto& part : parts) {
    for (CompressedRank& one : part) BRAID_TRY(appendRank(set, std::move(one)));
  }
  BRAID_TRY(indexConnections(set));
  return set;
}

}  // namespace braid::sim
