// What a GPU communicator holds beside the host state of Comm::Impl: its
// device and private stream, the words its kernels share with the host
// (abort, fault), the GPU FIFOs (transport/cuda_ipc) and their cursors,
// the device images of its schedules, and the launch being filled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "exec/device_one_shot.h"
#include "exec/device_program.h"
#include "gpu/runtime.h"
#include "kernels/engine/launch.h"
#include "transport/cuda_ipc/gpu_fifo.h"

namespace braid {

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
/// FIFOs have slots of `slotBytes` (comm_gpu_links.cc).
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

/// The calls waiting for one launch (Comm::Impl::enqueueGpu).
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
  /// For each call: its flight recorder record (Comm::Impl::flightSeq when it was enqueued).
  std::vector<uint64_t> flightSeqs;
};

struct GpuState {
  gpu::Runtime* runtime = nullptr;
  int device = -1;
  gpu::Stream stream = nullptr;  ///< uploads and FIFO setup, never the user's work
  /// Raised by abort(): kernels poll it and give up (pinned, mapped).
  uint32_t* abortWord = nullptr;
  /// Where a kernel that gives up says why (pinned, mapped).
  kernels::engine::FaultRecord* fault = nullptr;
  /// What each block waits for, for the flight recorder (kMaxWaitRecords; pinned, mapped).
  kernels::engine::WaitRecord* waits = nullptr;
  uint64_t launches = 0;  ///< launches so far: the next one's EngineArgs::launchSeq - 1
  /// Every FIFO end's cursor, handed out in order (device memory, zeroed).
  kernels::engine::FifoCursor* cursors = nullptr;
  size_t cursorsUsed = 0;
  size_t cursorCapacity = 0;
  transport::cuda_ipc::FifoPlacement placementFor(int peerDevice) const;

  std::map<GpuLinkKey, std::unique_ptr<transport::cuda_ipc::GpuRecvEnd>> recvLinks;
  std::map<GpuLinkKey, std::unique_ptr<transport::cuda_ipc::GpuSendEnd>> sendLinks;
  std::map<P2pProgramKey, std::unique_ptr<exec::DeviceProgram>> p2pPrograms;
  /// The one-shot all-reduce's boards; null where the one-shot is not allowed.
  std::unique_ptr<exec::DeviceOneShot> oneShot;
  /// BRAID_TIMEOUT_MS: how long destruction waits for peers to read the board.
  uint64_t timeoutMs = 0;
  /// The self-copy program (one channel, no ports), made on first use.
  std::unique_ptr<exec::DeviceProgram> selfCopy;
  /// Device programs of schedules evicted from the schedule cache: a
  /// launch still queued, or a captured graph, may read them, and freeing
  /// device memory would wait for every kernel of the device.
  std::vector<std::shared_ptr<exec::DeviceProgram>> retired;
  /// Scratch output of a tree reduce's non-roots; old buffers are kept for
  /// the same reason.
  void* scratch = nullptr;
  size_t scratchBytes = 0;
  std::vector<void*> retiredScratch;

  /// Orders the communicator's launches across streams: each launch waits
  /// for the one before when it is on another stream.
  gpu::Event lastLaunch = nullptr;
  gpu::Stream lastStream = nullptr;
  bool launchedAny = false;

  PendingLaunch pending;
  bool fusing = false;  ///< within beginFusedLaunch / endFusedLaunch

  GpuState() = default;
  GpuState(const GpuState&) = delete;
  GpuState& operator=(const GpuState&) = delete;
  /// Waits for the last launch, then frees what the state holds.
  ~GpuState();
};

}  // namespace braid
