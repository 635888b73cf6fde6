// Network's PXN relays (network.h; transport/net/ib/ib_relay.h): a GPU rank's point-to-point
// send to another host that PXN routes through an NVLink peer of its host leaves from that
// peer's process, on its NIC (the receiver's rail), instead of from this rank's own FIFO.
//
// The sending rank asks the relay's listener (connectRelayedGpuFifo) and its kernel then sends
// into the FIFO the relay made, by CUDA IPC of the relay's pinned host memory; the relay rank's
// process serves such requests on a thread of its own (PxnRelays, started by serveRelays). The
// receiver's end is the one any verbs FIFO has. Where the relay declines before it reached the
// receiver, the sender sends directly, as with PXN off.
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/log.h"
#include "comm/network.h"
#include "transport/net/ib/ib_relay.h"

namespace braid::comm {

Status Network::serveRelays(gpu::Runtime& runtime, int device, std::vector<bool> reachesUs) {
  if (!ib_ || relays_ != nullptr || config_.pxnDisable || config_.p2pPxnLevel == 0) {
    return Status::success();
  }
  PxnRelays::Host host{&runtime, device, members_.rank, std::move(reachesUs)};
  BRAID_ASSIGN_OR_RETURN(
      relays_,
      PxnRelays::start(
          std::move(host), *net_, *ib_,
          [this](const transport::net::Greeting& g) { return connectSocket(g.receiver, g); },
          [this, &runtime](int port) { return gpuSlotPlace(runtime, port, /*sending=*/true); },
          config_.timeoutMs));
  return Status::success();
}

int Network::relayOf(const transport::net::Greeting& greeting) const {
  if (!ib_ || greeting.sender != members_.rank) return -1;
  // A ring's or tree's hop keeps the NIC its plan gave it; PXN routes point-to-point FIFOs.
  if (!members_.plannedNic(greeting.channel, greeting.sender, greeting.receiver, true).empty()) {
    return -1;
  }
  const int relay = members_.p2pRelay(greeting.receiver);
  return relay == members_.rank ? -1 : relay;
}

Result<std::unique_ptr<transport::cuda_ipc::GpuSendEnd>> Network::connectRelayedGpuFifo(
    gpu::Runtime& runtime, int relay, const transport::net::Greeting& greeting,
    const std::string& name, size_t slot, kernels::engine::FifoCursor* cursor,
    const std::string& nic) {
  namespace ib = transport::ib;
  const int peer = greeting.receiver;
  const Deadline deadline = Deadline::afterMs(config_.timeoutMs).cancelledBy(health_.stopFlag());
  BRAID_ASSIGN_OR_RETURN(braid::sockets::Socket socket,
                         net_->connect(addresses_[relay], greeting.relayRequest(), deadline));
  BRAID_TRY(ib::sendRelayRequest(socket, ib::makeRelayRequest(slot, nic, name), deadline));
  BRAID_ASSIGN_OR_RETURN(const ib::RelayReply reply, ib::readRelayReply(socket, deadline));
  if (reply.outcome == ib::RelayOutcome::kDeclined) {
    BRAID_INFO("channel %d: to rank %d: PXN relay rank %d declined (%s); sending directly",
               greeting.channel, peer, relay, reply.why);
    return std::unique_ptr<transport::cuda_ipc::GpuSendEnd>();
  }
  if (reply.outcome != ib::RelayOutcome::kReady) {
    return remoteError("channel " + std::to_string(greeting.channel) + ": to rank " +
                       std::to_string(peer) + " through PXN relay rank " + std::to_string(relay) +
                       ": " + reply.why);
  }
  // The relay published the FIFO before it answered: it maps at once.
  std::unique_ptr<transport::cuda_ipc::GpuSendEnd> end;
  while (!end) {
    BRAID_ASSIGN_OR_RETURN(end,
                           transport::cuda_ipc::GpuSendEnd::tryOpen(runtime, name, slot, cursor));
    if (end) break;
    if (deadline.expired()) {
      return remoteError("PXN relay rank " + std::to_string(relay) + " answered, but its FIFO " +
                         name + " is not to be found");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  BRAID_INFO("channel %d: to rank %d through PXN relay rank %d's process on %s (slots in its %s)",
             greeting.channel, peer, relay, nic.c_str(),
             end->placement() == transport::cuda_ipc::FifoPlacement::kDeviceMemory
                 ? "GPU's memory"
                 : "pinned host memory");
  return end;
}

}  // namespace braid::comm
