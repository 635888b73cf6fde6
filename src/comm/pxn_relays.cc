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

Result<std::unique_ptr<PxnRelays>> PxnRelays::start(Host host,
                                                    transport::net::SocketRendezvous& rendezvous,
                                                    transport::ib::IbNetwork& ib, Connector connect,
                                                    GdrFor gdrFor, int64_t timeoutMs) {
  if (host.runtime == nullptr) return invalidArgument("PXN relays: no GPU runtime");
  std::unique_ptr<PxnRelays> relays(new PxnRelays(
      std::move(host), rendezvous, ib, std::move(connect), std::move(gdrFor), timeoutMs));
  relays->thread_ = std::thread([r = relays.get()] { r->serve(); });
  return relays;
}

PxnRelays::~PxnRelays() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  for (Relayed& relayed : relays_) {
    BRAID_INFO(
        "PXN relay: rank %d's FIFO to rank %d (channel %d) on %s: %llu bytes posted by "
        "this process (rank %d)",
        relayed.greeting.sender, relayed.greeting.receiver, relayed.greeting.channel,
        relayed.relay->port().c_str(),
        static_cast<unsigned long long>(relayed.relay->bytesPosted()), host_.rank);
    relayed.relay.reset();  // drains what the sender posted
  }
  if (stream_ != nullptr) (void)host_.runtime->streamDestroy(stream_);
}

void PxnRelays::serve() {
  if (Status set = host_.runtime->setDevice(host_.device); !set.ok()) {
    BRAID_WARN("PXN relay: rank %d serves no relay: %s", host_.rank, set.message().c_str());
    return;
  }
  Result<gpu::Stream> stream = host_.runtime->streamCreate();
  if (!stream.ok()) {
    BRAID_WARN("PXN relay: rank %d serves no relay: %s", host_.rank,
               stream.status().message().c_str());
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
  transport::ib::GdrChoice gdr = gdrFor_(ib_.portFor(request.value().nic));
  const size_t sender = static_cast<size_t>(greeting.sender);
  if (sender >= host_.reachesUs.size() || !host_.reachesUs[sender]) {
    gdr.place = transport::ib::SlotPlace::kStaged;  // its GPU cannot write this one's memory
  }
  bool reached = false;
  Result<std::unique_ptr<ib::IbRelay>> relay = ib::IbRelay::open(
      *host_.runtime, stream_, request.value().fifoName, request.value().slotBytes, ib_,
      [&] { return connect_(greeting); }, greeting.receiver, timeoutMs_, request.value().nic, gdr,
      &reached);
  if (!relay.ok()) {
    const std::string why =
        "rank " + std::to_string(host_.rank) + " cannot relay: " + relay.status().message();
    BRAID_WARN("PXN relay: %s", why.c_str());
    (void)ib::sendRelayReply(
        socket, reached ? ib::RelayOutcome::kFailed : ib::RelayOutcome::kDeclined, why, deadline);
    return;
  }
  BRAID_INFO(
      "PXN relay: rank %d relays rank %d's FIFO to rank %d (channel %d) on %s, its slots "
      "in %s",
      host_.rank, greeting.sender, greeting.receiver, greeting.channel,
      relay.value()->port().c_str(), transport::ib::slotPlaceName(relay.value()->place()));
  relays_.push_back({greeting, std::move(relay).value()});
  // The relay runs whether or not the sender hears this: its end of the FIFO is made.
  (void)ib::sendRelayReply(socket, ib::RelayOutcome::kReady, "", deadline);
}

}  // namespace braid::comm
