// GpuSide: what a GPU communicator holds beside the host parts.
//
// It owns the device and a private stream (uploads and FIFO setup, never the user's work), the
// words its kernels share with the host (abort, fault, what each block waits for), the GPU FIFOs
// (transport/cuda_ipc) and their cursors, the device images of point-to-point programs, the
// GPU one-shot boards, scratch, and the launch being filled: it turns engine calls into kernel
// launches on the caller's stream (gpu_launch.cc) and makes the FIFOs they run on
// (gpu_links.cc). Which calls to make is the GPU ways' (comm/ways/gpu_*_way.cc).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "braid/status.h"
#include "comm/device_buffer_check.h"
#include "comm/health.h"
#include "comm/links.h"
#include "comm/members.h"
#include "comm/network.h"
#include "comm/recorder.h"
#include "comm/selector.h"
#include "config.h"
#include "exec/device_one_shot.h"
#include "exec/device_program.h"
#include "exec/device_symmetric.h"
#include "gpu/metered_runtime.h"
#include "gpu/runtime.h"
#include "kernels/engine/launch.h"
#include "transport/cuda_ipc/gpu_fifo.h"

namespace braid::comm {

/// A GPU FIFO of the schedules: to or from `peer` on `channel`, of one protocol.
struct GpuLinkKey {
  int peer;
  int channel;  ///< kP2pChannel for point-to-point
  kernels::engine::FifoProtocol protocol = kernels::engine::FifoProtocol::kSimple;
  bool operator<(const GpuLinkKey& o) const {
    return std::tie(peer, channel, protocol) < std::tie(o.peer, o.channel, o.protocol);
  }
};
inline constexpr int kP2pChannel = -1;

/// Slot size of point-to-point GPU FIFOs for a communicator whose schedule
/// FIFOs have slots of `slotBytes` (gpu_links.cc).
size_t gpuP2pSlotBytes(size_t slotBytes);

/// A point-to-point transfer's device program: one channel, one instruction.
struct P2pProgramKey {
  int peer;
  bool send;
  size_t bytes;
  bool operator<(const P2pProgramKey& o) const {
    return std::tie(peer, send, bytes) < std::tie(o.peer, o.send, o.bytes);
  }
};

/// A range of user memory a call reads or writes. The blocks of one launch run its calls in
/// order per block but not across blocks: a call that reads what an earlier call of the launch
/// writes (or writes what it reads or writes) must wait for the next launch.
struct Access {
  const void* begin = nullptr;
  size_t bytes = 0;
  bool write = false;
};

/// Whether `a` and `b` touch a common byte and one of them writes it.
inline bool conflicts(const Access& a, const Access& b) {
  if (!a.write && !b.write) return false;
  if (a.bytes == 0 || b.bytes == 0) return false;
  const auto* aBegin = static_cast<const unsigned char*>(a.begin);
  const auto* bBegin = static_cast<const unsigned char*>(b.begin);
  return aBegin < bBegin + b.bytes && bBegin < aBegin + a.bytes;
}

/// The blocks a launch of some calls uses: the most channels of its collectives (they start at
/// block 0), then one per point-to-point lane (peer, direction).
struct LaunchBlocks {
  uint32_t collective = 0;
  std::set<std::pair<int, int>> lanes;

  /// Counts `call`, whose lane is `lane` ((-1, 0) for a collective).
  void add(const kernels::engine::EngineCall& call, const std::pair<int, int>& lane) {
    if (lane.first < 0) {
      collective = std::max(collective, call.nchannels);
    } else {
      lanes.insert(lane);
    }
  }
  uint32_t total() const { return collective + static_cast<uint32_t>(lanes.size()); }
};

/// The calls waiting for one launch (GpuSide::enqueue).
struct PendingLaunch {
  std::vector<kernels::engine::EngineCall> calls;
  /// For each call: the block it must run on when it is point-to-point
  /// (its peer and direction), or -1 for a collective, which starts at 0.
  std::vector<std::pair<int, int>>
      lanes;  ///< (peer, 0 recv / 1 send / 2 self); peer -1: collective
  gpu::Stream stream = nullptr;
  bool typed = false;  ///< a call reduces: type and op say with what
  uint8_t type = 0;
  uint8_t op = 0;
  /// For each call: its flight recorder record (Recorder::flightSeq() when it was enqueued).
  std::vector<uint64_t> flightSeqs;
  /// What the calls read and write.
  std::vector<Access> accesses;
  /// The blocks the calls use so far.
  LaunchBlocks blocks;
};

class GpuSide {
 public:
  GpuSide(const Config& config, const Members& members, Health& health, Recorder& recorder,
          Links& links, Network& network)
      : config_(config),
        members_(members),
        health_(health),
        recorder_(recorder),
        links_(links),
        network_(network) {}
  /// Waits for the last launch, then frees what the side holds.
  ~GpuSide();
  GpuSide(const GpuSide&) = delete;
  GpuSide& operator=(const GpuSide&) = delete;

  /// The device, and the process's runtime, which counts this communicator's device memory.
  int device() const { return device_; }
  gpu::Runtime& runtime() const { return *runtime_; }
  /// Whether `buffer` is memory this GPU can address (device_buffer_check.h); `name` is the
  /// buffer's in the message.
  Status checkBuffer(const void* buffer, const char* name) const;
  /// Whether every rank's GPU reaches this one's memory by peer access (ranks of other hosts
  /// and of this GPU count as reaching it): what symmetric memory windows need (comm/windows.h).
  bool reachedByEveryPeer() const {
    for (bool r : peerReaches_) {
      if (!r) return false;
    }
    return true;
  }
  /// The GPU one-shot boards; null where the one-shot is not allowed.
  const exec::DeviceOneShot* oneShot() const { return oneShot_.get(); }
  /// The symmetric kernels' barriers and call records (exec/device_symmetric.h), made on first
  /// use: collective, every rank's first symmetric call makes them together.
  Result<exec::DeviceSymmetric*> symmetric();
  /// Device memory that releaseMemory keeps: the FIFO ends' cursors.
  size_t keptBytes() const { return cursorCapacity_ * sizeof(kernels::engine::FifoCursor); }

  /// Makes the state of a communicator on `device` (after the peers are known), allocating
  /// through `metered`.
  Status open(int device, gpu::MeteredRuntime& metered);
  /// Sets the channels of the communicator (Links::nchannels) and blockBudget from the
  /// device, the ranks that share it and the user's bounds (gpu_residency.cc); fails where the
  /// ranks sharing the device cannot all have their blocks resident.
  Status chooseChannels();
  /// A GPU communicator's part of connecting: the GPU cost model and the one-shot boards where
  /// the selector's `settings` allow them, noted there (its FIFOs come with their first use).
  Status connect(SelectorSettings& settings);
  /// Where memory that rank `peer` writes or reads lies: this GPU's memory
  /// when the peer's GPU reaches it and BRAID_TRANSPORTS allows cuda_ipc,
  /// else pinned host memory (FIFOs, one-shot boards).
  transport::cuda_ipc::FifoPlacement placementFor(int peer) const;
  /// What a kernel of this communicator recorded when it gave up; success if nothing.
  Status faultStatus() const;
  /// Waits for every launch of this communicator to finish.
  Status waitForLaunches();
  /// After a quiesce: lowers the abort word and forgets the fault the stopped kernels recorded.
  void resume();

  /// ncclCommSuspend with NCCL_SUSPEND_MEM: frees the FIFOs, programs, scratch, one-shot
  /// boards and symmetric barriers (made again on the next symmetric call) (every launch has ended,
  /// on every rank: Comm::suspendMemory); the cursors, abort and fault words stay.
  Status releaseMemory();
  /// ncclCommResume after releaseMemory: zeroed cursors for the FIFOs to come, and the one-shot
  /// boards again (collective); the FIFOs come with their first use, as at creation. Without a
  /// release before it (a suspend without NCCL_SUSPEND_MEM) nothing was freed, and the FIFOs,
  /// their cursors and the boards are live: it leaves them as they are.
  Status restoreMemory(Selector& selector);

  /// Adds calls to the pending launch, all to the same one: `lanes[i]` is
  /// (-1, 0) for a collective, else (peer, 0 recv / 1 send / 2 self copy);
  /// `accesses` is what they read and write. Launches at once unless fusing;
  /// launches what is pending first when the calls cannot join it (another
  /// stream, no room, another datatype or operator, or memory an earlier
  /// call writes or reads).
  Status enqueue(const std::vector<kernels::engine::EngineCall>& calls,
                 const std::vector<std::pair<int, int>>& lanes, const std::vector<Access>& accesses,
                 void* stream);
  /// Launches the pending calls, if any.
  Status flush();
  /// Device memory of at least `bytes` that a call writes instead of the user's (a tree
  /// reduce's non-roots). A smaller buffer before it is kept until the memory is released, as
  /// retired programs are: a queued launch or a captured graph may still write it.
  Result<void*> scratchFor(size_t bytes);

  /// `program` with its ports copied to device memory, on the side's own stream (uploads and
  /// FIFO setup, never the user's work).
  /// `llSlotBytes`: the LL slot size of a program of the LL protocol, else 0.
  Result<exec::DeviceProgram> upload(const exec::Program& program,
                                     const std::vector<exec::ChannelPorts>& ports,
                                     size_t llSlotBytes = 0);
  /// Keeps the device program of a schedule the schedule cache evicted until the memory is
  /// released: a launch still queued, or a captured graph, may read it, and freeing device
  /// memory would wait for every kernel of the device.
  void retire(std::shared_ptr<exec::DeviceProgram> program) {
    retired_.push_back(std::move(program));
  }
  /// The device program of one point-to-point transfer (a copy for this rank itself), made the
  /// first time its peer, direction and size come up (gpu_links.cc).
  Result<const exec::DeviceProgram*> p2pProgram(int peer, bool send, size_t bytes);
  /// Within a group (Comm::beginFusedLaunch): calls gather into the pending launch.
  void beginFusing() { fusing_ = true; }
  /// The group's end: launches what gathered; a failed launch leaves nothing pending.
  Status endFusing();
  /// Forgets the calls gathered and never launched (a quiesce: nothing of them ran).
  void dropPending() { pending_ = {}; }

  /// The GPU FIFOs behind every port of `program`, made where missing:
  /// receiving ends first, then sending ends (as Links::linkSchedule).
  Result<std::vector<exec::ChannelPorts>> linkSchedule(const exec::Program& program,
                                                       algo::Protocol protocol);
  /// The GPU FIFOs of point-to-point transfers with these peers.
  Status linkP2p(const std::vector<int>& recvFrom, const std::vector<int>& sendTo);

 private:
  /// The process's runtime, counting this communicator's device memory (Comm::Impl owns it:
  /// the cached device programs of Calls outlive this side); `runtime_` is it.
  gpu::MeteredRuntime* meter_ = nullptr;
  gpu::Runtime* runtime_ = nullptr;
  int device_ = -1;
  mutable DeviceBufferCheck bufferCheck_;  ///< a cache: checkBuffer stays a query
  gpu::Stream stream_ = nullptr;           ///< uploads and FIFO setup, never the user's work
  /// Raised by abort(): kernels poll it and give up (pinned, mapped).
  uint32_t* abortWord_ = nullptr;
  /// Where a kernel that gives up says why (pinned, mapped).
  kernels::engine::FaultRecord* fault_ = nullptr;
  /// What each block waits for, for the flight recorder (kMaxWaitRecords; pinned, mapped).
  kernels::engine::WaitRecord* waits_ = nullptr;
  uint64_t launches_ = 0;  ///< launches so far: the next one's EngineArgs::launchSeq - 1
  /// Every FIFO end's cursor, handed out in order (device memory, zeroed).
  kernels::engine::FifoCursor* cursors_ = nullptr;
  size_t cursorsUsed_ = 0;
  size_t cursorCapacity_ = 0;

  std::map<GpuLinkKey, std::unique_ptr<transport::cuda_ipc::GpuRecvEnd>> recvLinks_;
  std::map<GpuLinkKey, std::unique_ptr<transport::cuda_ipc::GpuSendEnd>> sendLinks_;
  std::map<P2pProgramKey, std::unique_ptr<exec::DeviceProgram>> p2pPrograms_;
  /// The one-shot all-reduce's boards; null where the one-shot is not allowed.
  std::unique_ptr<exec::DeviceOneShot> oneShot_;
  /// The symmetric kernels' barriers and call records; null until the first symmetric call.
  std::unique_ptr<exec::DeviceSymmetric> symmetric_;
  /// The self-copy program (one channel, no ports), made on first use.
  std::unique_ptr<exec::DeviceProgram> selfCopy_;
  /// Device programs of schedules evicted from the schedule cache: a
  /// launch still queued, or a captured graph, may read them, and freeing
  /// device memory would wait for every kernel of the device.
  std::vector<std::shared_ptr<exec::DeviceProgram>> retired_;

  /// Orders the communicator's launches across streams: each launch waits
  /// for the one before when it is on another stream.
  gpu::Event lastLaunch_ = nullptr;
  gpu::Stream lastStream_ = nullptr;
  bool launchedAny_ = false;
  /// A launch was captured into a graph, whose replays record lastLaunch_ too.
  bool capturedAny_ = false;

  PendingLaunch pending_;
  bool fusing_ = false;  ///< within beginFusedLaunch / endFusedLaunch

  /// Most blocks one launch may use: this rank's share of what the device holds at once
  /// (gpu_channels.h); set by chooseChannels.
  int blockBudget_ = 1;

  struct LinkPlan;
  /// Whether every FIFO of `plan` in `protocol` is made already: a call seen before makes none.
  bool linked(const LinkPlan& plan, kernels::engine::FifoProtocol protocol) const;
  /// Makes the FIFOs of `plan` in `format` with slots of `slot` bytes, names from `nonce`.
  Status makeLinks(const LinkPlan& plan, size_t slot, uint64_t nonce,
                   transport::cuda_ipc::FifoFormat format);
  /// makeLinks' FIFOs to and from ranks on other hosts (network FIFOs into GPU memory).
  Status makeNetworkLinks(const LinkPlan& plan, size_t slot, uint64_t nonce,
                          transport::cuda_ipc::FifoFormat format);
  /// Opens the sending end to (`channel`, `peer`) named `name` once its receiver has made it
  /// (within `wait`).
  Status openSendEnd(int channel, int peer, const std::string& name, size_t slot,
                     transport::cuda_ipc::FifoFormat format, const transport::WaitContext& wait);
  Result<kernels::engine::FifoCursor*> takeCursor();
  /// Whether each rank's GPU reaches this one's memory by peer access, asked in the direction
  /// data flows (open), said at INFO where one does not.
  Status notePeerReach();
  /// Launches `launch` on `stream` after the communicator's launch before it (gpu_launch.cc).
  Status orderedLaunch(const gpu::Launch& launch, gpu::Stream stream, bool capturing);

  /// Where memory that every peer stores into lies: device memory where each peer reaches
  /// it, else pinned host memory (the one-shot boards, the symmetric barriers).
  transport::cuda_ipc::FifoPlacement sharedPlacement() const;
  /// The one-shot boards, where `allowed` has the one-shot (connect, restoreMemory): the
  /// largest call they take, 0 where none was made.
  Result<size_t> makeOneShot(const tune::Allowed& allowed);

  /// Whether each rank's GPU reaches this GPU's memory (placementFor), by rank.
  std::vector<bool> peerReaches_;
  bool memoryReleased_ = false;  ///< by releaseMemory, not yet restored
  void* scratch_ = nullptr;      ///< scratchFor's buffer
  size_t scratchBytes_ = 0;
  std::vector<void*> retiredScratch_;

  const Config& config_;
  const Members& members_;
  Health& health_;
  Recorder& recorder_;
  Links& links_;
  Network& network_;
};

}  // namespace braid::comm
