// The connections the algorithms' schedules run on.
//
// A schedule names, per channel, the peers each step receives from and sends
// to; ring, trees and their rooted variants need different pairs, so they
// are connected the first time a schedule uses them, and kept. Segment names
// are a function of the communicator, the pair, the channel and the
// protocol, so no handshake is needed: the receiver creates its end, the
// sender opens it once it exists and unlinks the name.
//
// linkSchedule makes every receiving end a schedule needs before it waits
// for any sending end. Every rank that links the same schedule does the
// same, so the ends a sender waits for are made by receivers that wait for
// nothing first: no cycle of waits is possible.
//
// A peer on another host is a socket FIFO instead (comm_network.cc): the
// sender connects to the receiver's listener, and the receiving end waits
// for that connection on its own proxy thread, so linking waits for nobody.
#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "base/futex.h"
#include "base/log.h"
#include "comm_impl.h"
#include "transport/net/socket_fifo.h"
#include "transport/shm/shm_fifo.h"
#include "transport/shm/shm_ll_fifo.h"

namespace braid {
namespace {

uint64_t protocolSalt(algo::Protocol protocol) {
  return protocol == algo::Protocol::kLl ? 0x4c4c4c4c4c4c4c4cull : 0;
}

}  // namespace

size_t Comm::Impl::llSlotBytes() const { return std::min(transport::shm::kLlSlotBytes, slotBytes); }

Status Comm::Impl::linkSchedule(const exec::Program& program, algo::Protocol protocol,
                                std::vector<exec::ChannelConnections>* out) {
  const bool ll = protocol == algo::Protocol::kLl;
  const size_t slot = ll ? llSlotBytes() : slotBytes;
  const uint64_t nonce = linkNonce ^ protocolSalt(protocol);
  std::set<std::pair<int, int>> recvPairs;  // (channel, peer)
  std::set<std::pair<int, int>> sendPairs;
  for (size_t c = 0; c < program.channels.size(); ++c) {
    for (int peer : program.channels[c].recvPeers) recvPairs.insert({static_cast<int>(c), peer});
    for (int peer : program.channels[c].sendPeers) sendPairs.insert({static_cast<int>(c), peer});
  }
  BRAID_TRY(checkCrossesHosts(protocol, recvPairs, sendPairs));
  auto greeting = [&](int sender, int receiver, int channel) {
    return transport::net::Greeting::of(nonce, sender, receiver, channel,
                                        static_cast<int>(protocol));
  };
  for (const auto& [c, peer] : recvPairs) {
    auto& end = recvLinks[{peer, c, protocol}];
    if (end || onOtherHost(peer)) continue;
    const std::string name = transport::shm::segmentName(nonce, peer, rank, c);
    if (ll) {
      BRAID_ASSIGN_OR_RETURN(end, transport::shm::createLlRecvEnd(name, slot));
    } else {
      BRAID_ASSIGN_OR_RETURN(end, transport::shm::createRecvEnd(name, slot));
    }
    madeSegments.push_back(name);  // unlinked by the sender, or at destruction if it never comes
    BRAID_TRACE("links: %s FIFO from rank %d on channel %d made", algo::protocolName(protocol),
                peer, c);
  }
  const transport::WaitContext wait = waitContext();
  for (const auto& [c, peer] : sendPairs) {
    auto& end = sendLinks[{peer, c, protocol}];
    if (end || !onOtherHost(peer)) continue;
    BRAID_ASSIGN_OR_RETURN(end, connectNetworkFifo(peer, greeting(rank, peer, c), slot));
    BRAID_TRACE("links: socket FIFO to rank %d on channel %d connected", peer, c);
  }
  for (const auto& [c, peer] : sendPairs) {
    auto& end = sendLinks[{peer, c, protocol}];
    if (end) continue;
    const std::string name = transport::shm::segmentName(nonce, rank, peer, c);
    for (int attempt = 0; !end; ++attempt) {
      if (ll) {
        BRAID_ASSIGN_OR_RETURN(end, transport::shm::tryOpenLlSendEnd(name, slot));
      } else {
        BRAID_ASSIGN_OR_RETURN(end, transport::shm::tryOpenSendEnd(name, slot));
      }
      if (end) break;
      if (stop->load()) return futex::abortedError(peer);
      if (wait.deadline.expired()) {
        return remoteError("rank " + std::to_string(peer) + " did not make its " +
                           algo::protocolName(protocol) + " FIFO for channel " + std::to_string(c) +
                           " in time (BRAID_TIMEOUT_MS); is it running the same collective?");
      }
      // The receiver makes its end as soon as it links the same schedule.
      if (attempt < 100) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
    BRAID_TRY(transport::shm::unlinkSegment(name));
    BRAID_TRACE("links: %s FIFO to rank %d on channel %d opened", algo::protocolName(protocol),
                peer, c);
  }
  for (const auto& [c, peer] : recvPairs) {
    auto& end = recvLinks[{peer, c, protocol}];
    if (end) continue;
    BRAID_ASSIGN_OR_RETURN(end, awaitNetworkFifo(peer, greeting(peer, rank, c), slot));
  }
  out->assign(program.channels.size(), exec::ChannelConnections{});
  for (size_t c = 0; c < program.channels.size(); ++c) {
    const int ch = static_cast<int>(c);
    for (int peer : program.channels[c].recvPeers) {
      (*out)[c].recv.push_back(recvLinks[{peer, ch, protocol}].get());
    }
    for (int peer : program.channels[c].sendPeers) {
      (*out)[c].send.push_back(sendLinks[{peer, ch, protocol}].get());
    }
  }
  return Status::success();
}

}  // namespace braid
