// PxnRelays (pxn_relays.h): the thread that serves a GPU rank's relay requests.
#include "comm/pxn_relays.h"

#include <string>
#include <utility>

#include "base/log.h"

namespace braid::comm {
namespace {

// How long the thread waits for a request before it looks at its stop flag.
constexpr int64_t kCheckMs = 50;

}  // namespace

Result<std::unique_ptr<PxnRelays>> PxnRelays::start(gpu::Runtime& runtime, int device, int rank,
                                                    transport::net::SocketRendezvous& rendezvous,
                                                    transport::ib::IbNetwork& ib,
                                                    Connector connect, int64_t timeoutMs) {
  std::unique_ptr<PxnRelays> relays(
      new PxnRelays(runtime, device, rank, rendezvous, ib, std::move(connect), timeoutMs));
  relays->thread_ = std::thread([r = relays.get()] { r->serve(); });
  return relays;
}

PxnRelays::~PxnRelays() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  for (Relayed& relayed : relays_) {
    BRAID_INFO("PXN relay: rank %d's FIFO to rank %d (channel %d) on %s: %llu bytes posted by "
               "this process (rank %d)",
               relayed.greeting.sender, relayed.greeting.receiver, relayed.greeting.channel,
               relayed.relay->port().c_str(),
               static_cast<unsigned long long>(relayed.relay->bytesPosted()), rank_);
    relayed.relay.reset();  // drains what the sender posted
  }
  if (stream_ != nullptr) (void)runtime_.streamDestroy(stream_);
}

void PxnRelays::serve() {
  if (Status set = runtime_.setDevice(device_); !set.ok()) {
    BRAID_WARN("PXN relay: rank %d serves no relay: %s", rank_, set.message().c_str());
    return;
  }
  Result<gpu::Stream> stream = runtime_.streamCreate();
  if (!stream.ok()) {
    BRAID_WARN("PXN relay: rank %d serves no relay: %s", rank_, stream.status().message().c_str());
    return;
  }
  stream_ = stream.value();
  while (!stop_.load()) {
    auto request = rendezvous_.acceptRelayRequest(Deadline::afterMs(kCheckMs), &stop_);
    if (request) serveOne(request->first, request->second);
  }
}

void PxnRelays::serveOne(const transport::net::Greeting& asked,
                         const braid::sockets::Socket& socket) {
  namespace ib = transport::ib;
  const transport::net::Greeting greeting = asked.relayed();
  const Deadline deadline = Deadline::afterMs(timeoutMs_).cancelledBy(&stop_);
  Result<ib::RelayRequest> request = ib::readRelayRequest(socket, deadline);
  if (!request.ok()) {
    BRAID_WARN("PXN relay: rank %d's request: %s", greeting.sender,
               request.status().message().c_str());
    (void)ib::sendRelayReply(socket, ib::RelayOutcome::kDeclined, request.status().message(),
                             deadline);
    return;
  }
  bool reached = false;
  Result<std::unique_ptr<ib::IbRelay>> relay = ib::IbRelay::open(
      runtime_, stream_, request.value().fifoName, request.value().slotBytes, ib_,
      [&] { return connect_(greeting); }, greeting.receiver, timeoutMs_, request.value().nic,
      &reached);
  if (!relay.ok()) {
    const std::string why = "rank " + std::to_string(rank_) + " cannot relay: " +
                            relay.status().message();
    BRAID_WARN("PXN relay: %s", why.c_str());
    (void)ib::sendRelayReply(socket, reached ? ib::RelayOutcome::kFailed
                                             : ib::RelayOutcome::kDeclined,
                             why, deadline);
    return;
  }
  BRAID_INFO("PXN relay: rank %d relays rank %d's FIFO to rank %d (channel %d) on %s, its slots "
             "in this process's pinned host memory",
             rank_, greeting.sender, greeting.receiver, greeting.channel,
             relay.value()->port().c_str());
  relays_.push_back({greeting, std::move(relay).value()});
  // The relay runs whether or not the sender hears this: its end of the FIFO is made.
  (void)ib::sendRelayReply(socket, ib::RelayOutcome::kReady, "", deadline);
}

}  // namespace braid::comm
