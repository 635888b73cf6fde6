// Launch (GPU communicators): the call becomes one engine call (kernels/engine/launch.h) of the
// communicator's next kernel launch on the caller's stream (GpuSide::enqueue): the one-shot
// all-reduce on the GPU boards (one block reads every peer's board; its LL cells serve either
// protocol), or the schedule's device program, the same Program the host executor runs,
// lowered once and copied to the device (ScheduleCache). Both apply avg's division in the
// kernel.
#include <algorithm>
#include <vector>

#include "comm/gpu_side.h"
#include "comm/ways/ways.h"

namespace braid::comm {

// Variable blocks included.
std::vector<Access> accessesOf(const CollectiveCall& call, int nranks, int rank, void* output) {
  const size_t elem = dataTypeSize(call.type);
  size_t blocksEnd = call.count * static_cast<size_t>(nranks);
  if (call.blockCounts != nullptr) {
    blocksEnd = 0;
    for (int r = 0; r < nranks; ++r) {
      blocksEnd = std::max(blocksEnd, call.blockOffsets[r] + call.blockCounts[r]);
    }
  }
  const size_t in = call.collective == Collective::kReduceScatter ? blocksEnd : call.count;
  const size_t out = call.collective == Collective::kAllGather ? blocksEnd : call.count;
  const bool reads = readsInput(call, rank);
  const bool writes = holdsResult(call, rank) || output != call.output;  // or writes scratch
  std::vector<Access> accesses;
  if (reads) accesses.push_back({call.input, in * elem, false});
  if (writes) accesses.push_back({output, out * elem, true});
  return accesses;
}

namespace {

namespace engine = kernels::engine;

class GpuLaunchWay : public Way {
 public:
  explicit GpuLaunchWay(const WayParts& parts) : parts_(parts) {}

  Outcome run(WayCall& wc) override {
    const CollectiveCall& call = wc.call;
    const tune::Choice& choice = *wc.choice;
    engine::EngineCall ec = engineCall(wc);
    void* output = call.output;
    if (choice.algorithm == algo::Algorithm::kOneShot) {
      ec.oneShot = parts_.gpu->oneShot()->board();
      ec.nchannels = 1;
      ec.sliceElems = call.count;
      wc.record.plan(choice, nullptr);
    } else {
      Result<const CachedSchedule*> cached = parts_.schedules.get(call, choice);
      if (!cached.ok()) return Outcome::ranIt(cached.status());
      wc.record.plan(choice, &cached.value()->program);
      if (treeReduceNeedsScratch(call, choice, parts_.members.rank)) {
        Result<void*> scratch = parts_.gpu->scratchFor(call.count * dataTypeSize(call.type));
        if (!scratch.ok()) return Outcome::ranIt(scratch.status());
        output = scratch.value();
      }
      ec.channels = cached.value()->device->channels();
      ec.nchannels = cached.value()->device->nchannels();
      ec.sliceElems = cached.value()->program.sliceElems;
    }
    ec.output = output;
    Outcome done = Outcome::ranIt(parts_.gpu->enqueue(
        {ec}, {{-1, 0}}, accessesOf(call, parts_.members.nranks, parts_.members.rank, output),
        call.stream));
    done.channels = ec.nchannels;
    return done;
  }

 private:
  /// What every engine call of a collective says: buffers, type, operator, protocol.
  static engine::EngineCall engineCall(const WayCall& wc) {
    const CollectiveCall& call = wc.call;
    engine::EngineCall ec{};
    ec.input = call.input;
    ec.elemBytes = static_cast<uint32_t>(dataTypeSize(call.type));
    ec.type = static_cast<uint8_t>(call.type);
    ec.op = static_cast<uint8_t>(wc.spec.functor);
    ec.copyOnly = reduces(call.collective) ? 0 : 1;
    ec.protocol = static_cast<uint8_t>(wc.choice->protocol);  // FifoProtocol has its values
    ec.args = wc.spec.args;
    ec.scalarPointer = wc.spec.scalarPointer;
    return ec;
  }

  WayParts parts_;
};

}  // namespace

std::unique_ptr<Way> makeGpuLaunchWay(const WayParts& parts) {
  return std::make_unique<GpuLaunchWay>(parts);
}

}  // namespace braid::comm
