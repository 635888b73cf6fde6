// ScheduleCache: the schedules of recent collective calls, each made once and reused while calls
// repeat (a training step repeats a handful of shapes).
//
// A shape's first call takes four steps, each a function of its own: find (a recent call had
// the same collective, count, type size, root, algorithm, protocol, channels and blocks), generate
// (the ring's or the tree's schedule, algo/), lower (exec::lowerSchedule: the program the executors
// run, which applies avg's division as its last instructions where the rank holds final values)
// and link (the FIFOs behind every port: Links' on the host; on a GPU the GPU side's, and the
// program copied to the device). Keeping the entry may evict the oldest; a GPU communicator's
// evicted device program goes to GpuSide::retire, since a queued launch or a captured graph may
// still read it.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "algo/schedule.h"
#include "braid/status.h"
#include "comm/call.h"
#include "comm/links.h"
#include "comm/members.h"
#include "comm/recorder.h"
#include "config.h"
#include "exec/device_program.h"
#include "exec/program.h"
#include "tune/plugin/tuner_session.h"
#include "tune/select.h"

namespace braid::comm {

class GpuSide;

/// A schedule made for a recent call, with what runs it.
struct CachedSchedule {
  Collective collective;
  size_t count = 0;
  size_t elemBytes = 0;
  int root = -1;
  algo::Algorithm algorithm = algo::Algorithm::kRing;
  algo::Protocol protocol = algo::Protocol::kSimple;
  int nchannels = 0;      ///< the channels its schedule runs on (a tuner plugin may ask for fewer)
  size_t chunkElems = 0;  ///< its chunks' most elements (a tuner plugin may change them)
  std::vector<size_t> blockCounts;  ///< variable-count calls only (CollectiveCall)
  std::vector<size_t> blockOffsets;
  algo::Schedule schedule;
  exec::Program program;                              ///< the schedule, lowered
  std::shared_ptr<exec::DeviceProgram> device;        ///< GPU communicators: on the device
  std::vector<exec::ChannelConnections> connections;  ///< host: views into Links' FIFOs
};

class ScheduleCache {
 public:
  /// A handful of entries covers the collectives a training step repeats.
  static constexpr size_t kEntries = 8;

  ScheduleCache(const Config& config, const Members& members, Links& links,
                const Recorder& recorder)
      : config_(config), members_(members), links_(links), recorder_(recorder) {}

  /// A GPU communicator's side, once made: schedules are linked and uploaded there.
  void attachGpu(GpuSide* gpu) { gpu_ = gpu; }
  /// The communicator's tuner plugin session, where it has one: a call the plugin was asked
  /// about takes the chunk its getChunkSize gives, as NCCL's does.
  void attachTuner(tune::TunerSession* tuner) { tuner_ = tuner; }
  /// The schedule of `call` as `choice` runs it, made and linked if no recent call had it.
  Result<const CachedSchedule*> get(const CollectiveCall& call, const tune::Choice& choice);
  /// Forgets every schedule, and with them their device programs and FIFO ports (a GPU
  /// communicator's suspend): the next calls make them again.
  void clear() { entries_.clear(); }

 private:
  const CachedSchedule* find(const CollectiveCall& call, const tune::Choice& choice,
                             const algo::ScheduleSizes& sizes) const;
  /// The channels `choice` runs on: what it asks for, at most the communicator's.
  int channelsOf(const tune::Choice& choice) const;
  /// How `call` is cut as `choice` runs it: its channels, and chunks and slices by the FIFO
  /// slots' rule (algo::sizeForSlots) or, where the tuner plugin was asked, the chunk its
  /// getChunkSize gives, within what the rule allows (as NCCL clamps it to its buffers).
  Result<algo::ScheduleSizes> sizesFor(const CollectiveCall& call, const tune::Choice& choice);
  /// The schedule of `call` cut by `sizes` (algo/), dumped with BRAID_DUMP_SCHEDULE; the
  /// entry's key too.
  Status generate(const CollectiveCall& call, const tune::Choice& choice,
                  const algo::ScheduleSizes& sizes, CachedSchedule& entry) const;
  /// The entry's program, and its FIFOs (and device image) linked.
  Status lowerAndLink(const CollectiveCall& call, CachedSchedule& entry);
  /// Keeps `entry`, evicting the oldest when full.
  const CachedSchedule* keep(CachedSchedule&& entry);

  const Config& config_;
  const Members& members_;
  Links& links_;
  const Recorder& recorder_;
  GpuSide* gpu_ = nullptr;
  tune::TunerSession* tuner_ = nullptr;
  bool saidClamp_ = false;  // a plugin's chunk beyond the FIFO's is said once
  std::vector<CachedSchedule> entries_;
};

}  // namespace braid::comm
