// The ways of running a call (way.h), as the dispatcher (Calls, comm/calls.h) makes them, and
// what they use of the communicator's parts.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "braid/comm.h"
#include "braid/status.h"
#include "comm/call.h"
#include "comm/links.h"
#include "comm/members.h"
#include "comm/recorder.h"
#include "comm/schedule_cache.h"
#include "comm/ways/tiny_lane.h"
#include "comm/ways/way.h"
#include "config.h"
#include "kernels/host_reduce.h"

namespace braid::comm {

class GpuSide;
struct Access;  // gpu_side.h

/// Host memory a call may write instead of the user's (a tree reduce's non-roots, the
/// deterministic ring's received blocks); it grows and is kept for the next call.
class HostScratch {
 public:
  unsigned char* take(size_t bytes) {
    if (bytes_.size() < bytes) bytes_.resize(bytes);
    return bytes_.data();
  }

 private:
  std::vector<unsigned char> bytes_;
};

/// What the ways use of the communicator's parts.
struct WayParts {
  const Config& config;
  const Members& members;
  Links& links;
  Recorder& recorder;
  ScheduleCache& schedules;
  HostScratch& scratch;
  GpuSide* gpu = nullptr;  ///< GPU communicators only
};

/// Whether a tree reduce writes partial results where this rank's output would be, which a
/// non-root must not see: it then writes scratch instead.
inline bool treeReduceNeedsScratch(const CollectiveCall& call, const tune::Choice& choice,
                                   int rank) {
  return call.collective == Collective::kReduce && rank != call.root &&
         choice.algorithm == algo::Algorithm::kTree;
}

/// Whether zero-copy may take `call` (zero_copy_way.cc): the ranks then decide together.
bool zeroCopyFits(const WayParts& parts, const CollectiveCall& call, const kernels::HostOp& op);

std::unique_ptr<Way> makeZeroCopyWay(const WayParts& parts);
/// Arms `tiny` after each call it runs, where the lane may take the next one.
std::unique_ptr<Way> makeOneShotWay(const WayParts& parts, TinyLane& tiny);
std::unique_ptr<Way> makeDeterministicRingWay(const WayParts& parts);
std::unique_ptr<Way> makeScheduledWay(const WayParts& parts);
std::unique_ptr<Way> makeGpuLoneCopyWay(const WayParts& parts);
std::unique_ptr<Way> makeGpuLaunchWay(const WayParts& parts);
/// Asks `windows` (Calls' lookup, which may be set later) where a call's buffers lie.
std::unique_ptr<Way> makeGpuSymmetricWay(const WayParts& parts, const WindowLookup& windows);

/// What `call` reads and writes of this rank's memory, with `output` where it writes (the
/// call's, or scratch): the input and output extents of its collective (gpu_launch_way.cc).
std::vector<Access> accessesOf(const CollectiveCall& call, int nranks, int rank, void* output);

/// A way of running a batch of sends and receives.
class P2pWay {
 public:
  virtual ~P2pWay() = default;
  virtual Status run(const std::vector<P2pOp>& ops, void* stream) = 0;
};

std::unique_ptr<P2pWay> makeHostP2pWay(const WayParts& parts);
std::unique_ptr<P2pWay> makeGpuP2pWay(const WayParts& parts);

}  // namespace braid::comm
