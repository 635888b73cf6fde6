// How the two ends of a socket FIFO find each other.
//
// Every rank of a communicator that spans hosts listens on one TCP port (on the interface its
// bootstrap uses) and the ranks exchange these addresses at creation. A sender connects to its
// receiver's listener and opens with a Greeting naming the FIFO (communicator, sender, receiver,
// channel, protocol). A thread of the rendezvous accepts every connection and files it by its
// greeting; a receiver takes the one it wants whenever it asks, before or after it arrived.
// Nobody but that thread ever blocks in accept, so no order of connects and accepts between
// ranks can wait in a cycle.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>

#include "base/deadline.h"
#include "base/socket.h"
#include "base/socket_greeting.h"
#include "braid/status.h"

namespace braid::transport::net {

/// The first bytes a sender writes on a FIFO's connection.
struct Greeting {
  uint64_t magic = 0;  ///< the communicator's link nonce
  int32_t sender = -1;
  int32_t receiver = -1;
  int32_t channel = -1;
  int32_t protocol = -1;
  int32_t stripe = 0;   ///< which of a striped FIFO's connections (socket_stripes.h)
  int32_t stripes = 1;  ///< how many the sender opens, so that a receiver can tell a mismatch

  static Greeting of(uint64_t magic, int sender, int receiver, int channel, int protocol) {
    Greeting g;
    g.magic = magic;
    g.sender = sender;
    g.receiver = receiver;
    g.channel = channel;
    g.protocol = protocol;
    return g;
  }
  /// The stripe number of a request to the listener's process to relay this FIFO's sending end
  /// (NCCL's PXN: ib/ib_relay.h): the FIFO's sender asks, naming its receiver and channel.
  static constexpr int32_t kRelayStripe = -1;
  /// This FIFO's relay request.
  Greeting relayRequest() const {
    Greeting g = *this;
    g.stripe = kRelayStripe;
    g.stripes = 1;
    return g;
  }
  bool asksRelay() const { return stripe == kRelayStripe; }
  /// The FIFO a relay request names, as its receiver files it.
  Greeting relayed() const { return stripeOf(0, 1); }
  /// The greeting of the same FIFO's connection number `index`.
  Greeting stripeOf(int index, int count) const {
    Greeting g = *this;
    g.stripe = index;
    g.stripes = count;
    return g;
  }
  auto key() const { return std::tie(magic, sender, receiver, channel, protocol, stripe); }
  bool operator<(const Greeting& other) const { return key() < other.key(); }
  bool operator==(const Greeting& other) const { return key() == other.key(); }
};

class SocketRendezvous {
 public:
  /// Listens on `local` (its port is ignored: the kernel picks one) and starts accepting. Every
  /// connection must prove `proof` (the communicator's secret, base/socket_greeting.h); one that
  /// does not, a port scanner's, is dropped and never filed.
  static Result<std::unique_ptr<SocketRendezvous>> create(const sockaddr_storage& local,
                                                          const braid::sockets::Proof& proof = {});
  /// Stops accepting; connections nobody took are closed.
  ~SocketRendezvous();

  /// Where peers connect: the listener's address and port.
  const sockaddr_storage& address() const { return address_; }

  /// Connects to the listener at `to` (from the address `from`, where given: by that
  /// interface) and sends `greeting`.
  Result<braid::sockets::Socket> connect(const sockaddr_storage& to, const Greeting& greeting,
                                         const Deadline& deadline,
                                         const sockaddr_storage* from = nullptr);
  /// The connection that opened with `greeting`, once it has arrived; gives up at the deadline
  /// or when `stop` (if given) is set. Safe to call from several threads.
  Result<braid::sockets::Socket> accept(const Greeting& greeting, const Deadline& deadline,
                                        const std::atomic<bool>* stop = nullptr);
  /// The connection that opened with `greeting` if it has arrived; never waits. For a proxy
  /// that serves many connections from one thread (transport/net/ib).
  std::optional<braid::sockets::Socket> tryAccept(const Greeting& greeting);
  /// A relay request (Greeting::asksRelay) that has arrived, whatever FIFO it names, with its
  /// connection; waits for one until the deadline or `stop`. For the process that relays.
  std::optional<std::pair<Greeting, braid::sockets::Socket>> acceptRelayRequest(
      const Deadline& deadline, const std::atomic<bool>* stop);

 private:
  SocketRendezvous(braid::sockets::Socket listener, const sockaddr_storage& address,
                   const braid::sockets::Proof& proof);
  void acceptLoop();

  braid::sockets::Socket listener_;
  sockaddr_storage address_;
  const braid::sockets::Proof proof_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<Greeting, braid::sockets::Socket> connections_;  // accepted, not taken yet
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
};

}  // namespace braid::transport::net
