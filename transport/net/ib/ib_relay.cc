#include "transport/net/ib/ib_relay.h"
#include "base/socket_io.h"

#include <cstdio>
#include <cstring>
#include <utility>

#include "base/log.h"
#include "transport/net/ib/dmabuf_fd.h"

namespace braid::transport::ib {
namespace {

// Both ends are braid processes of one host: the structs travel as they are laid out.
static_assert(sizeof(RelayRequest) == 200, "RelayRequest travels as raw bytes");
static_assert(sizeof(RelayReply) == 260, "RelayReply travels as raw bytes");

template <size_t N>
void copyName(char (&to)[N], const std::string& from) {
  std::snprintf(to, N, "%s", from.c_str());
}

Status ioStatus(const braid::sockets::IoResult& io, const std::string& what) {
  if (io.ok()) return Status::success();
  return remoteError("PXN relay: " + what + ": " + io.describe());
}

}  // namespace

RelayRequest makeRelayRequest(size_t slotBytes, const std::string& nic,
                              const std::string& fifoName) {
  RelayRequest request;
  request.slotBytes = slotBytes;
  copyName(request.nic, nic);
  copyName(request.fifoName, fifoName);
  return request;
}

Status sendRelayRequest(const braid::sockets::Socket& socket, const RelayRequest& request,
                        const Deadline& deadline) {
  return ioStatus(braid::sockets::sendAll(socket, &request, sizeof(request), deadline),
                  "sending the request");
}

Result<RelayRequest> readRelayRequest(const braid::sockets::Socket& socket,
                                      const Deadline& deadline) {
  RelayRequest request;
  BRAID_TRY(ioStatus(braid::sockets::recvAll(socket, &request, sizeof(request), deadline),
                     "reading a request"));
  request.nic[sizeof(request.nic) - 1] = '\0';
  request.fifoName[sizeof(request.fifoName) - 1] = '\0';
  if (request.slotBytes == 0 || request.slotBytes > kMaxIbSlotBytes ||
      request.fifoName[0] == '\0') {
    return invalidArgument("PXN relay: a request for slots of " +
                           std::to_string(request.slotBytes) + " bytes named '" + request.fifoName +
                           "': not a FIFO a relay can carry");
  }
  return request;
}

Status sendRelayReply(const braid::sockets::Socket& socket, RelayOutcome outcome,
                      const std::string& why, const Deadline& deadline) {
  RelayReply reply;
  reply.outcome = outcome;
  copyName(reply.why, why);
  return ioStatus(braid::sockets::sendAll(socket, &reply, sizeof(reply), deadline),
                  "answering a request");
}

Result<RelayReply> readRelayReply(const braid::sockets::Socket& socket, const Deadline& deadline) {
  RelayReply reply;
  BRAID_TRY(ioStatus(braid::sockets::recvAll(socket, &reply, sizeof(reply), deadline),
                     "reading the relay's answer"));
  reply.why[sizeof(reply.why) - 1] = '\0';
  return reply;
}

Result<std::unique_ptr<IbRelay>> IbRelay::open(gpu::Runtime& runtime, gpu::Stream stream,
                                               const std::string& fifoName, size_t slotBytes,
                                               IbNetwork& network, ReceiverConnector connect,
                                               int receiver, int64_t timeoutMs,
                                               const std::string& nic, const GdrChoice& gdr,
                                               bool* reachedReceiver) {
  *reachedReceiver = false;
  // Elsewhere than on the receiver's rail the relay's bytes would leave by a NIC neither end
  // planned: declined, the sender sends by its own.
  if (!network.opened(nic)) {
    return invalidArgument("PXN relay: this process has no port " +
                           (nic.empty() ? std::string("(none named)") : nic) + " to post on");
  }
  std::unique_ptr<IbRelay> relay(new IbRelay());
  relay->fifoName_ = fifoName;
  relay->port_ = network.portAt(network.portFor(nic)).name();
  relay->place_ = inDeviceMemory(gdr.place) ? gdr.place : SlotPlace::kStaged;
  SlotMemory memory;
  memory.place = relay->place_;
  memory.relayed = true;
  DmabufFd dmabuf;
  // The pump is the FIFO's receiver and keeps its own cursor (engine::receiverCursor): the
  // FIFO needs none in device memory.
  if (inDeviceMemory(relay->place_)) {
    size_t slotsBytes = 0;
    BRAID_ASSIGN_OR_RETURN(relay->fifo_, cuda_ipc::GpuRecvEnd::createSplit(
                                             runtime, fifoName, slotBytes, stream, &slotsBytes));
    if (relay->place_ == SlotPlace::kDmabuf) {
      Result<int> fd = runtime.exportDmabuf(relay->fifo_->end().fifo.slots, slotsBytes);
      if (!fd.ok()) return fd.status().withContext("PXN relay FIFO " + fifoName);
      dmabuf = DmabufFd(fd.value());
      memory.dmabufFd = dmabuf.get();
    }
  } else {
    BRAID_ASSIGN_OR_RETURN(
        relay->fifo_,
        cuda_ipc::GpuRecvEnd::create(runtime, fifoName, slotBytes,
                                     cuda_ipc::FifoPlacement::kPinnedHost, nullptr, stream));
  }
  BRAID_ASSIGN_OR_RETURN(braid::sockets::Socket toReceiver, connect());
  *reachedReceiver = true;
  BRAID_ASSIGN_OR_RETURN(relay->pump_,
                         IbSendPump::start(network, relay->fifo_->end().fifo, std::move(toReceiver),
                                           receiver, timeoutMs, nic, memory));
  return relay;
}

IbRelay::~IbRelay() {
  pump_.reset();  // drains what the sender posted, then stops
  // The sender unlinks the names once it mapped the FIFO; this is for a sender that never came.
  cuda_ipc::unlinkFifoNames(fifoName_, cuda_ipc::FifoPlacement::kPinnedHost);
}

}  // namespace braid::transport::ib
