// PXN over verbs: a GPU rank's send to another host leaving by the NIC of an NVLink peer of
// its host, through that peer's process (NCCL's PXN, topology/net_routes.h plans where).
//
//   sender S's kernel -> FIFO in relay P's pinned host memory (S maps it: CUDA IPC of host
//                        memory) -> [P's IbSendPump, on P's NIC] RDMA writes -> receiver D
//
// The sender asks P over P's listener (a relay request: the FIFO's greeting with
// Greeting::kRelayStripe, then a RelayRequest). P makes the FIFO under the record name S gave,
// connects to D's listener with the FIFO's own greeting (D cannot tell P from S: its receiving
// end is unchanged) and starts a send pump over the FIFO on the NIC S named, then answers. S's
// kernel then sends into P's FIFO with the flag protocol it speaks to any FIFO of its host; the
// pump takes each posted slot as that FIFO's receiver, as it takes a FIFO of its own process.
// Its slots are in P's pinned host memory (every byte staged there once), or, where GPUDirect
// RDMA applies to P's GPU and NIC and S's GPU reaches P's memory, in P's GPU memory, which the
// NIC reads by its dmabuf (or nvidia-peermem) registration: no byte through host memory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/deadline.h"
#include "base/socket.h"
#include "braid/status.h"
#include "gpu/runtime.h"
#include "transport/cuda_ipc/gpu_fifo.h"
#include "transport/net/ib/ib_fifo_pump.h"

namespace braid::transport::ib {

/// What a sender asks of its relay, after the relay greeting.
struct RelayRequest {
  uint64_t slotBytes = 0;
  char nic[64] = {};        ///< the port the relay posts on ("mlx5_3:1"), as the sender names it
  char fifoName[128] = {};  ///< the record under which the relay publishes its FIFO
};

/// How the relay answers.
enum class RelayOutcome : int32_t {
  kReady = 0,     ///< the FIFO is published and the pump connected to the receiver
  kDeclined = 1,  ///< nothing reached the receiver: the sender may send directly
  kFailed = 2,    ///< the receiver was reached, then setting up failed: the FIFO is lost
};
struct RelayReply {
  RelayOutcome outcome = RelayOutcome::kFailed;
  char why[256] = {};  ///< what went wrong, unless kReady
};

RelayRequest makeRelayRequest(size_t slotBytes, const std::string& nic,
                              const std::string& fifoName);
Status sendRelayRequest(const braid::sockets::Socket& socket, const RelayRequest& request,
                        const Deadline& deadline);
Result<RelayRequest> readRelayRequest(const braid::sockets::Socket& socket,
                                      const Deadline& deadline);
Status sendRelayReply(const braid::sockets::Socket& socket, RelayOutcome outcome,
                      const std::string& why, const Deadline& deadline);
Result<RelayReply> readRelayReply(const braid::sockets::Socket& socket, const Deadline& deadline);

/// The relay's side of one relayed FIFO: the FIFO, in this process's pinned host memory, and
/// the send pump that posts its slots on this process's port. The pump stops (draining what
/// was posted) before the FIFO goes.
class IbRelay {
 public:
  /// Connects to the relayed FIFO's receiver (its own greeting, from the relay's process).
  using ReceiverConnector = std::function<Result<braid::sockets::Socket>()>;
  /// Publishes the FIFO of `slotBytes` slots under `fifoName`, connects to `receiver` and starts
  /// the pump there, on the port named `nic`, which this process must have opened.
  /// `*reachedReceiver` says whether it connected before it failed (the sender may then no
  /// longer send directly).
  /// Where `gdr` puts a sender's slots in device memory (GPUDirect RDMA: the relay's GPU and
  /// NIC allow it, and the sender's GPU reaches the relay's memory), the FIFO is split
  /// (GpuRecvEnd::createSplit): its slots in the relay GPU's memory, registered with the NIC,
  /// so that the bytes go GPU to GPU by CUDA IPC, then GPU to NIC, never through host memory.
  static Result<std::unique_ptr<IbRelay>> open(gpu::Runtime& runtime, gpu::Stream stream,
                                               const std::string& fifoName, size_t slotBytes,
                                               IbNetwork& network, ReceiverConnector connect,
                                               int receiver, int64_t timeoutMs,
                                               const std::string& nic, const GdrChoice& gdr,
                                               bool* reachedReceiver);
  ~IbRelay();

  /// The bytes its pump posted so far.
  uint64_t bytesPosted() const { return pump_ != nullptr ? pump_->bytesPosted() : 0; }
  /// The port it posts on.
  const std::string& port() const { return port_; }
  /// Where its slots are.
  SlotPlace place() const { return place_; }

 private:
  IbRelay() = default;

  std::string fifoName_;
  std::string port_;
  SlotPlace place_ = SlotPlace::kStaged;
  std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo_;
  std::unique_ptr<IbSendPump> pump_;  // after the FIFO: stops before it goes
};

}  // namespace braid::transport::ib
