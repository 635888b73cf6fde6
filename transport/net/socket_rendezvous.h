// How the two ends of a socket FIFO find each other.
//
// Every rank of a communicator that spans hosts listens on one TCP port (on the interface its
// bootstrap uses) and the ranks exchange these addresses at creation. A sender connects to its
// receiver's listener and opens with a Greeting naming the FIFO (communicator, sender, receiver,
// channel, protocol); the receiver accepts connections until the one it wants arrives, and keeps
// any other that arrives early (a peer may already link the next schedule) for its turn. The
// kernel completes a connect before the receiver accepts, so every rank connecting its sends
// before accepting its receives cannot wait in a cycle.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include "braid/status.h"
#include "util/deadline.h"
#include "util/socket.h"

namespace braid::transport::net {

/// The first bytes a sender writes on a FIFO's connection.
struct Greeting {
  uint64_t magic = 0;  ///< the communicator's link nonce
  int32_t sender = -1;
  int32_t receiver = -1;
  int32_t channel = -1;
  int32_t protocol = -1;

  auto key() const { return std::tie(magic, sender, receiver, channel, protocol); }
  bool operator<(const Greeting& other) const { return key() < other.key(); }
  bool operator==(const Greeting& other) const { return key() == other.key(); }
};

class SocketRendezvous {
 public:
  /// Listens on `local` (its port is ignored: the kernel picks one).
  static Result<std::unique_ptr<SocketRendezvous>> create(const sockaddr_storage& local);

  /// Where peers connect: the listener's address and port.
  const sockaddr_storage& address() const { return address_; }

  /// Connects to the listener at `to` and sends `greeting`.
  Result<braid::net::Socket> connect(const sockaddr_storage& to, const Greeting& greeting,
                                     const Deadline& deadline);
  /// The connection that opened with `greeting`: one that arrived before, or the next ones
  /// accepted until it comes (the others kept for later calls).
  Result<braid::net::Socket> accept(const Greeting& greeting, const Deadline& deadline);

 private:
  explicit SocketRendezvous(braid::net::Socket listener, const sockaddr_storage& address);

  braid::net::Socket listener_;
  sockaddr_storage address_;
  std::unique_ptr<braid::net::GreetingAcceptor> acceptor_;
  std::map<Greeting, braid::net::Socket> early_;
};

}  // namespace braid::transport::net
