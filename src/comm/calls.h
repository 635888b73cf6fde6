// Calls: what turns a call on a communicator into a program and runs it.
//
// A collective is checked and recorded, its algorithm and protocol chosen (comm/selector.h),
// its schedule built or reused (algo/) and lowered to a program (exec/program.h) whose FIFOs
// are linked on first use; then the host executor runs it (calls.cc), or the GPU side enqueues
// it on the caller's stream (calls_gpu.cc). It owns the schedules of recent calls, the caller's
// premulsum operators, scratch, the count of calls BRAID_CHECK_CALLS compared
// (calls_check.cc) and the registrations of ncclCommRegister. Deterministic all-reduce on the
// ring has a program of its own (calls_deterministic.cc); point-to-point batches run on
// Links' FIFOs or the GPU side's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "algo/schedule.h"
#include "braid/comm.h"
#include "braid/status.h"
#include "comm/call.h"
#include "comm/health.h"
#include "comm/links.h"
#include "comm/members.h"
#include "comm/recorder.h"
#include "comm/selector.h"
#include "comm/user_ops.h"
#include "config.h"
#include "exec/device_program.h"
#include "exec/p2p_executor.h"
#include "exec/program.h"
#include "kernels/host_reduce.h"
#include "tune/slot_stores.h"

namespace braid::comm {

class GpuSide;

class Calls {
 public:
  Calls(const Config& config, const Members& members, Health& health, Recorder& recorder,
        Links& links, Selector& selector)
      : config_(config),
        members_(members),
        health_(health),
        recorder_(recorder),
        links_(links),
        selector_(selector) {}

  /// A GPU communicator's side, once made; the calls then run there.
  void attachGpu(GpuSide* gpu) { gpu_ = gpu; }
  /// Forgets the cached schedules, and with them their device programs and FIFO ports (a GPU
  /// communicator's suspend); the next calls make them again.
  void dropSchedules() {
    schedules_.clear();
    tiny_ = TinyLane();
  }

  /// Runs a collective: checked, recorded, and on failure explained and noted.
  Status run(const CollCall& call);
  /// Runs a batch of sends and receives, the same way.
  Status sendRecv(const std::vector<P2pOp>& ops, void* stream);

  /// ncclRedOpCreatePreMulSum's operators.
  UserOps userOps;
  /// ncclCommRegister's registrations: start -> bytes.
  std::map<void*, size_t> registrations;

 private:
  /// The shape of the last host all_reduce that ran on the one-shot board, and what ran it: a
  /// call of the same shape takes the same way without choosing again (calls_tiny.cc).
  struct TinyLane {
    bool armed = false;
    size_t count = 0;
    DataType type{};
    RedOp op{};
    tune::Choice choice;
    kernels::HostOp hostOp;

    bool takes(const CollCall& call) const {
      return armed && call.collective == Collective::kAllReduce && call.count == count &&
             call.type == type && call.op == op && call.blockCounts == nullptr;
    }
  };

  /// A schedule built for a recent call, reused while calls repeat (the common case).
  struct CachedSchedule {
    Collective collective;
    size_t count = 0;
    size_t elemBytes = 0;
    int root = -1;
    algo::Algorithm algorithm = algo::Algorithm::kRing;
    algo::Protocol protocol = algo::Protocol::kSimple;
    std::vector<size_t> blockCounts;  ///< variable-count calls only (CollCall)
    std::vector<size_t> blockOffsets;
    algo::Schedule schedule;
    exec::Program program;                              ///< the schedule, lowered
    std::shared_ptr<exec::DeviceProgram> device;        ///< GPU communicators: on the device
    std::vector<exec::ChannelConnections> connections;  ///< views into Links' FIFOs
  };

  /// Health's checks, and on a GPU whether a kernel gave up.
  Status checkUsable() const;
  /// run's work once the call is checked and recorded.
  Status runRecorded(const CollCall& call);
  /// After a one-shot all_reduce ran: keeps its shape for the tiny lane where the lane may take
  /// the next one (calls_tiny.cc).
  void armTinyLane(const CollCall& call, const tune::Choice& choice, const kernels::HostOp& op);
  /// run's work for a call the tiny lane takes (calls_tiny.cc).
  Status runTiny(const CollCall& call);
  /// A host call that failed: explained (a lost peer first), kept as the communicator's
  /// breakage and logged with what ran it.
  Status failed(const CollCall& call, const tune::Choice& choice, const Status& s);
  /// The schedule of `call` as `choice` runs it, made and connected if no recent call had it.
  Result<const CachedSchedule*> scheduleFor(const CollCall& call, const tune::Choice& choice);
  /// Whether `call` runs on the zero-copy board (links' zeroCopy) rather than its choice.
  bool zeroCopyFits(const CollCall& call, const kernels::HostOp& op) const;
  /// All-reduce in deterministic mode on the ring (calls_deterministic.cc).
  Status deterministicRingAllReduce(const CollCall& call, const kernels::HostOp& op,
                                    algo::Protocol protocol);
  /// BRAID_CHECK_CALLS: whether every rank makes this same call (calls_check.cc).
  Status checkCallAgrees(const CollCall& call);
  /// sendRecv's work once the batch is checked and recorded.
  Status sendRecvRecorded(const std::vector<P2pOp>& ops, void* stream);
  /// Enqueues a collective on the call's stream (calls_gpu.cc).
  Status runOnGpu(const CollCall& call);
  /// Enqueues a batch of sends and receives on `stream` (calls_gpu.cc).
  Status sendRecvOnGpu(const std::vector<P2pOp>& ops, void* stream);

  const Config& config_;
  const Members& members_;
  Health& health_;
  Recorder& recorder_;
  Links& links_;
  Selector& selector_;
  GpuSide* gpu_ = nullptr;
  std::vector<CachedSchedule> schedules_;
  /// Scratch output for ranks whose output a schedule must not touch (a
  /// tree reduce's non-roots) and for the deterministic ring's blocks.
  std::vector<unsigned char> scratch_;
  uint64_t checkedCalls_ = 0;  ///< the sequence number of the next checked call
  TinyLane tiny_;
  tune::SlotStores slotStores_;  ///< BRAID_STREAM_SLOTS=-1: plain or streamed, call by call
};

}  // namespace braid::comm
