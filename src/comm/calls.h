// Calls: the dispatcher that turns a call on a communicator into work.
//
// A collective (its arguments checked by Comm, call_arguments.h) has its communicator's health
// checked and its record opened (Recorder::Scope); then the ways of running it (ways/way.h) are
// asked in order until one takes it: on the host zero-copy, one-shot, the deterministic ring and
// the scheduled way, on a GPU the copy for one rank and the launch. The algorithm and protocol are
// chosen (comm/selector.h) before the first way that needs them. After the way ran, the
// dispatcher settles the call in one place: a failure explained and kept as the communicator's
// breakage, or avg's division applied where the way left it. A host all_reduce of the shape the
// last one-shot call had takes the tiny lane (ways/tiny_lane.h) before all of this.
// Point-to-point batches go to the host's or the GPU's point-to-point way.
//
// It owns the ways, the schedules of recent calls (ScheduleCache), host scratch, the caller's
// premulsum operators and the count of calls BRAID_CHECK_CALLS compared (calls_check.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "braid/comm.h"
#include "braid/status.h"
#include "comm/call.h"
#include "comm/health.h"
#include "comm/links.h"
#include "comm/members.h"
#include "comm/recorder.h"
#include "comm/schedule_cache.h"
#include "comm/selector.h"
#include "comm/user_ops.h"
#include "comm/ways/tiny_lane.h"
#include "comm/ways/way.h"
#include "comm/ways/ways.h"
#include "config.h"

namespace braid::comm {

class GpuSide;

class Calls {
 public:
  Calls(const Config& config, const Members& members, Health& health, Recorder& recorder,
        Links& links);

  /// The selector, once the communicator is connected: it chooses for the ways that need it.
  void useSelector(Selector& selector) {
    selector_ = &selector;
    schedules_.attachTuner(selector.tuner());
  }
  /// A GPU communicator's side, once made: the calls then run there, in the GPU's ways.
  void attachGpu(GpuSide* gpu);
  /// Forgets the cached schedules, and with them their device programs and FIFO ports (a GPU
  /// communicator's suspend), and the tiny lane's shape; the next calls make them again.
  void dropSchedules() {
    schedules_.clear();
    tiny_.disarm();
  }

  /// Where the symmetric way (ways/gpu_symmetric_way.cc) finds the windows of a call's
  /// buffers (Comm::setWindowLookup).
  void setWindowLookup(WindowLookup lookup) { windows_ = std::move(lookup); }

  /// Runs a collective whose arguments Comm checked: recorded, dispatched to its way, settled.
  Status run(const CollectiveCall& call);
  /// Runs a batch of sends and receives, the same way.
  Status sendRecv(const std::vector<P2pOp>& ops, void* stream);

  /// ncclRedOpCreatePreMulSum: an operator of this communicator (UserOps::create).
  Result<RedOp> createPreMulSum(const void* scalar, DataType type, bool scalarByPointer) {
    return userOps_.create(scalar, type, scalarByPointer);
  }
  /// ncclRedOpDestroy.
  Status destroyOp(RedOp op) { return userOps_.destroy(op); }

 private:
  /// What the ways use of the parts, `gpu_` included.
  WayParts parts() {
    return WayParts{config_, members_, links_, recorder_, schedules_, scratch_, gpu_};
  }
  /// Health's checks, and on a GPU whether a kernel gave up.
  Status checkUsable() const;
  /// A call the tiny lane takes, from its start to its settling.
  Status runTiny(const CollectiveCall& call);
  /// A checked and recorded call, to its way.
  Status dispatch(const CollectiveCall& call, Recorder::Scope& record);
  /// The host's part of dispatch: the operator as the host applies it.
  Status dispatchOnHost(const CollectiveCall& call, Recorder::Scope& record);
  /// The GPU's part: the device, the buffers, the operator as the kernels apply it.
  Status dispatchOnGpu(const CollectiveCall& call, Recorder::Scope& record);
  /// Asks the ways in order until one takes the call, and settles it.
  Status runWays(WayCall& wc);
  /// After a way ran a call: a failure explained and kept, or avg's division where left.
  Status settle(const WayCall& wc, const Outcome& outcome);
  /// A host call (`what`) that failed: explained (a lost peer first), kept as the
  /// communicator's breakage and logged.
  Status failed(const std::string& what, const Status& s);
  /// BRAID_CHECK_CALLS: whether every rank makes this same call (calls_check.cc).
  Status checkCallAgrees(const CollectiveCall& call);

  const Config& config_;
  const Members& members_;
  Health& health_;
  Recorder& recorder_;
  Links& links_;
  Selector* selector_ = nullptr;
  GpuSide* gpu_ = nullptr;
  ScheduleCache schedules_;
  HostScratch scratch_;
  TinyLane tiny_;
  /// The ways of running a collective, in the order they are asked.
  std::vector<std::unique_ptr<Way>> ways_;
  /// Comm::setWindowLookup's; empty: no call's buffers lie in windows.
  WindowLookup windows_;
  std::unique_ptr<P2pWay> p2pWay_;
  uint64_t checkedCalls_ = 0;  ///< the sequence number of the next checked call
  UserOps userOps_;            ///< the caller's premulsum operators
};

}  // namespace braid::comm
