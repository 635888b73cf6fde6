// ScheduleCache (schedule_cache.h): find, generate, lower and link, keep.
#include "comm/schedule_cache.h"

#include <algorithm>
#include <utility>

#include "algo/ring.h"
#include "algo/tree.h"
#include "base/log.h"
#include "comm/gpu_side.h"
#include "comm/selector.h"

namespace braid::comm {
namespace {

// Whether a cached layout is the call's: both uniform, or the same blocks.
bool sameBlocks(const std::vector<size_t>& cached, const size_t* call, int nranks) {
  if (call == nullptr) return cached.empty();
  return cached.size() == static_cast<size_t>(nranks) &&
         std::equal(cached.begin(), cached.end(), call);
}

}  // namespace

Result<const CachedSchedule*> ScheduleCache::get(const CollectiveCall& call,
                                                 const tune::Choice& choice) {
  BRAID_ASSIGN_OR_RETURN(const algo::ScheduleSizes sizes, sizesFor(call, choice));
  if (const CachedSchedule* found = find(call, choice, sizes)) return found;
  CachedSchedule entry;
  BRAID_TRY(generate(call, choice, sizes, entry));
  BRAID_TRY(lowerAndLink(call, entry));
  return keep(std::move(entry));
}

// Variable-count calls are kept too, by their blocks: a training step repeats them with the
// same counts as often as the uniform ones.
const CachedSchedule* ScheduleCache::find(const CollectiveCall& call, const tune::Choice& choice,
                                          const algo::ScheduleSizes& sizes) const {
  const size_t elemBytes = dataTypeSize(call.type);
  for (const auto& c : entries_) {
    if (c.collective == call.collective && c.count == call.count && c.elemBytes == elemBytes &&
        c.root == call.root && c.algorithm == choice.algorithm && c.protocol == choice.protocol &&
        c.nchannels == sizes.nchannels && c.chunkElems == sizes.chunkElems &&
        sameBlocks(c.blockCounts, call.blockCounts, members_.nranks) &&
        sameBlocks(c.blockOffsets, call.blockOffsets, members_.nranks)) {
      return &c;
    }
  }
  return nullptr;
}

int ScheduleCache::channelsOf(const tune::Choice& choice) const {
  const int all = links_.nchannels();
  return choice.nchannels > 0 ? std::min(choice.nchannels, all) : all;
}

Result<algo::ScheduleSizes> ScheduleCache::sizesFor(const CollectiveCall& call,
                                                    const tune::Choice& choice) {
  const size_t elemBytes = dataTypeSize(call.type);
  algo::ScheduleSizes sizes;
  sizes.nranks = members_.nranks;
  sizes.rank = members_.rank;
  sizes.count = call.count;
  sizes.nchannels = channelsOf(choice);
  algo::sizeForSlots(
      sizes, choice.protocol == algo::Protocol::kLl ? links_.llSlotBytes() : links_.slotBytes(),
      transport::kFifoSlots, elemBytes);
  if (tuner_ == nullptr || !choice.pluginAsked) return sizes;
  const size_t ours = sizes.chunkElems * elemBytes;
  BRAID_ASSIGN_OR_RETURN(const size_t asked,
                         tuner_->chunkBytes(call.collective, timedBytes(call, members_.nranks),
                                            choice, sizes.nchannels, ours));
  if (asked == ours) return sizes;
  if (asked > ours && !saidClamp_) {
    BRAID_INFO(
        "TUNER/Plugin: chunk size %zu exceeds the %zu bytes braid's FIFOs give a chunk, "
        "clamping",
        asked, ours);
    saidClamp_ = true;
  }
  // Whole packs of the grain, at least one, at most the rule's chunk; a slice within a chunk.
  const size_t elems = std::min(asked, ours) / elemBytes;
  sizes.chunkElems = std::max(sizes.grainElems, elems / sizes.grainElems * sizes.grainElems);
  sizes.maxSliceElems = std::min(sizes.maxSliceElems, sizes.chunkElems);
  sizes.minSliceElems = std::min(sizes.minSliceElems, sizes.maxSliceElems);
  return sizes;
}

Status ScheduleCache::generate(const CollectiveCall& call, const tune::Choice& choice,
                               const algo::ScheduleSizes& sizes, CachedSchedule& entry) const {
  const size_t elemBytes = dataTypeSize(call.type);
  Result<algo::Schedule> made = invalidArgument("no schedule");
  if (choice.algorithm == algo::Algorithm::kTree) {
    algo::TreeParams p;
    static_cast<algo::ScheduleSizes&>(p) = sizes;
    p.deterministic = config_.deterministic;
    p.plannedTrees = members_.trees();
    made = algo::treeSchedule(call.collective, p, call.root);
  } else {
    algo::RingParams p;
    static_cast<algo::ScheduleSizes&>(p) = sizes;
    p.order = members_.ring();
    if (!members_.rings().empty()) p.channelOrders = members_.channelOrders(sizes.nchannels);
    if (call.blockCounts != nullptr) {
      p.blockCounts.assign(call.blockCounts, call.blockCounts + members_.nranks);
      p.blockOffsets.assign(call.blockOffsets, call.blockOffsets + members_.nranks);
    }
    made = algo::ringSchedule(call.collective, p, call.root);
    entry.blockCounts = std::move(p.blockCounts);
    entry.blockOffsets = std::move(p.blockOffsets);
  }
  if (!made.ok()) return made.status();
  recorder_.dumpPlan(call, choice, &made.value());
  entry.collective = call.collective;
  entry.count = call.count;
  entry.elemBytes = elemBytes;
  entry.root = call.root;
  entry.algorithm = choice.algorithm;
  entry.protocol = choice.protocol;
  entry.nchannels = sizes.nchannels;
  entry.chunkElems = sizes.chunkElems;
  entry.schedule = std::move(made).value();
  return Status::success();
}

Status ScheduleCache::lowerAndLink(const CollectiveCall& call, CachedSchedule& entry) {
  // The operator's final step (avg's division) runs where the rank holds the result.
  const bool finishes = reduces(call.collective) && holdsResult(call, members_.rank);
  BRAID_ASSIGN_OR_RETURN(entry.program, exec::lowerSchedule(entry.schedule, finishes));
  if (gpu_ == nullptr) {
    return links_.linkSchedule(entry.program, entry.protocol, &entry.connections)
        .withContext("connecting the collective's FIFOs");
  }
  BRAID_ASSIGN_OR_RETURN(const std::vector<exec::ChannelPorts> ports,
                         gpu_->linkSchedule(entry.program, entry.protocol));
  BRAID_ASSIGN_OR_RETURN(
      exec::DeviceProgram device,
      gpu_->upload(entry.program, ports,
                   entry.protocol == algo::Protocol::kLl ? links_.llSlotBytes() : 0));
  entry.device = std::make_shared<exec::DeviceProgram>(std::move(device));
  return Status::success();
}

const CachedSchedule* ScheduleCache::keep(CachedSchedule&& entry) {
  if (entries_.size() >= kEntries) {
    // A queued launch or a captured graph may still read an evicted device program.
    if (gpu_ && entries_.front().device) gpu_->retire(entries_.front().device);
    entries_.erase(entries_.begin());
  }
  entries_.push_back(std::move(entry));
  return &entries_.back();
}

}  // namespace braid::comm
