// Scheduled: the call's schedule (algo/), made once per shape and kept (ScheduleCache), run by
// the host executor (exec/host_executor.h) on Links' FIFOs. It takes every call the ways before
// it declined. The program applies avg's division itself, as its last instructions.
//
// The first call of a shape makes its schedule and connects its FIFOs (lazily, links.cc): a
// peer that dies while they are greeted fails it here, and the dispatcher explains that failure
// as the executor's are, naming the lost rank rather than the socket that closed.
#include <chrono>

#include "comm/ways/ways.h"
#include "exec/host_executor.h"
#include "tune/slot_stores.h"

namespace braid::comm {
namespace {

class ScheduledWay : public Way {
 public:
  explicit ScheduledWay(const WayParts& parts) : parts_(parts) {}

  Outcome run(WayCall& wc) override {
    const CollectiveCall& call = wc.call;
    const tune::Choice& choice = *wc.choice;
    Result<const CachedSchedule*> cached = parts_.schedules.get(call, choice);
    if (!cached.ok()) return Outcome::ranIt(cached.status());
    wc.record.plan(choice, &cached.value()->program);
    const size_t elemBytes = dataTypeSize(call.type);
    const size_t bytes = call.count * elemBytes;
    void* output = treeReduceNeedsScratch(call, choice, parts_.members.rank)
                       ? parts_.scratch.take(bytes)
                       : call.output;
    // How the slots are written: as BRAID_STREAM_SLOTS forces, or as calls measure
    // (tune/slot_stores.h).
    const bool tuned = parts_.config.streamSlots < 0;
    const bool stream = tuned ? slotStores_.streamNext(bytes, parts_.links.streamSlots())
                              : parts_.config.streamSlots == 1;
    exec::HostCall hostCall{call.input,
                            output,
                            elemBytes,
                            wc.hostOp,
                            parts_.recorder.trace(),
                            parts_.recorder.hostWaits(),
                            stream};
    const auto started = std::chrono::steady_clock::now();
    Status s = exec::runOnHost(cached.value()->program, hostCall, cached.value()->connections,
                               parts_.links.waitContext());
    if (tuned && s.ok()) {
      slotStores_.record(
          bytes, stream,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    return Outcome::ranIt(std::move(s));
  }

 private:
  WayParts parts_;
  tune::SlotStores slotStores_;  ///< BRAID_STREAM_SLOTS=-1: plain or streamed, call by call
};

}  // namespace

std::unique_ptr<Way> makeScheduledWay(const WayParts& parts) {
  return std::make_unique<ScheduledWay>(parts);
}

}  // namespace braid::comm
