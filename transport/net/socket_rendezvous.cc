#include "transport/net/socket_rendezvous.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace braid::transport::net {

using braid::net::IoEnd;
using braid::net::IoResult;
using braid::net::Socket;

static_assert(sizeof(Greeting) == 24, "Greeting travels as raw bytes");

SocketRendezvous::SocketRendezvous(Socket listener, const sockaddr_storage& address)
    : listener_(std::move(listener)),
      address_(address),
      acceptor_(std::make_unique<braid::net::GreetingAcceptor>(listener_, sizeof(Greeting))) {}

Result<std::unique_ptr<SocketRendezvous>> SocketRendezvous::create(const sockaddr_storage& local) {
  BRAID_ASSIGN_OR_RETURN(Socket listener, braid::net::listenOn(local, /*reuseAddr=*/false));
  BRAID_ASSIGN_OR_RETURN(sockaddr_storage address, braid::net::boundAddress(listener));
  return std::unique_ptr<SocketRendezvous>(new SocketRendezvous(std::move(listener), address));
}

Result<Socket> SocketRendezvous::connect(const sockaddr_storage& to, const Greeting& greeting,
                                         const Deadline& deadline) {
  const std::string where = braid::net::addressToString(to);
  Result<Socket> connected = braid::net::connectWithRetry(to, deadline);
  if (!connected.ok()) {
    return connected.status().withContext("socket transport: connecting to rank " +
                                          std::to_string(greeting.receiver) + " at " + where);
  }
  IoResult io = braid::net::sendAll(connected.value(), &greeting, sizeof(greeting), deadline);
  if (!io.ok()) {
    return remoteError("socket transport: greeting rank " + std::to_string(greeting.receiver) +
                       " at " + where + ": " + io.describe());
  }
  return std::move(connected).value();
}

Result<Socket> SocketRendezvous::accept(const Greeting& greeting, const Deadline& deadline) {
  if (auto early = early_.find(greeting); early != early_.end()) {
    Socket socket = std::move(early->second);
    early_.erase(early);
    return socket;
  }
  for (;;) {
    Socket connection;
    std::vector<char> bytes;
    IoResult io = acceptor_->next(deadline, &connection, &bytes);
    if (io.end == IoEnd::kTimedOut) {
      return remoteError("socket transport: rank " + std::to_string(greeting.sender) +
                         " did not connect its FIFO for channel " +
                         std::to_string(greeting.channel) +
                         " in time (BRAID_TIMEOUT_MS); is it running the same collective?");
    }
    if (!io.ok()) return systemError("socket transport: accepting: " + io.describe());
    Greeting arrived;
    std::memcpy(&arrived, bytes.data(), sizeof(arrived));
    if (arrived == greeting) return connection;
    early_[arrived] = std::move(connection);
  }
}

}  // namespace braid::transport::net
