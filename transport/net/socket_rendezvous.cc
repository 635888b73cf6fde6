#include "transport/net/socket_rendezvous.h"
#include "base/socket_address.h"

#include <chrono>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "base/test_fault.h"

namespace braid::transport::net {

using braid::sockets::IoEnd;
using braid::sockets::IoResult;
using braid::sockets::Socket;

static_assert(sizeof(Greeting) == 32, "Greeting travels as raw bytes");

// How long the accepting thread waits before it looks at its stop flag, and a receiver before it
// looks at its own.
constexpr int64_t kCheckMs = 50;

SocketRendezvous::SocketRendezvous(Socket listener, const sockaddr_storage& address,
                                   const braid::sockets::Proof& proof)
    : listener_(std::move(listener)), address_(address), proof_(proof) {
  acceptor_ = std::thread([this] { acceptLoop(); });
}

SocketRendezvous::~SocketRendezvous() {
  stopping_.store(true);
  listener_.shutdown();
  acceptor_.join();
}

Result<std::unique_ptr<SocketRendezvous>> SocketRendezvous::create(
    const sockaddr_storage& local, const braid::sockets::Proof& proof) {
  BRAID_ASSIGN_OR_RETURN(Socket listener, braid::sockets::listenOn(local, /*reuseAddr=*/false));
  BRAID_ASSIGN_OR_RETURN(sockaddr_storage address, braid::sockets::boundAddress(listener));
  return std::unique_ptr<SocketRendezvous>(
      new SocketRendezvous(std::move(listener), address, proof));
}

void SocketRendezvous::acceptLoop() {
  braid::sockets::GreetingAcceptor acceptor(listener_, sizeof(Greeting), proof_);
  while (!stopping_.load()) {
    Socket connection;
    std::vector<char> bytes;
    IoResult io = acceptor.next(Deadline::afterMs(kCheckMs), &connection, &bytes);
    if (io.end == IoEnd::kTimedOut) continue;
    if (!io.ok()) {
      if (!stopping_.load()) {
        BRAID_WARN("socket transport: the listener failed: %s", io.describe().c_str());
      }
      return;
    }
    Greeting arrived;
    std::memcpy(&arrived, bytes.data(), sizeof(arrived));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      connections_[arrived] = std::move(connection);
    }
    arrived_.notify_all();
  }
}

Result<Socket> SocketRendezvous::connect(const sockaddr_storage& to, const Greeting& greeting,
                                         const Deadline& deadline, const sockaddr_storage* from) {
  const std::string where = braid::sockets::addressToString(to);
  Result<Socket> connected = braid::sockets::connectWithRetry(to, deadline, from);
  if (!connected.ok()) {
    return connected.status().withContext("socket transport: connecting to rank " +
                                          std::to_string(greeting.receiver) + " at " + where);
  }
  test_fault::reached("greeting.before");
  IoResult io = braid::sockets::sendProvenGreeting(connected.value(), proof_, &greeting,
                                                   sizeof(greeting), deadline);
  if (!io.ok()) {
    return remoteError("socket transport: greeting rank " + std::to_string(greeting.receiver) +
                       " at " + where + ": " + io.describe());
  }
  test_fault::reached("greeting.sent");
  return std::move(connected).value();
}

Result<Socket> SocketRendezvous::accept(const Greeting& greeting, const Deadline& deadline,
                                        const std::atomic<bool>* stop) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (auto found = connections_.find(greeting); found != connections_.end()) {
      Socket socket = std::move(found->second);
      connections_.erase(found);
      test_fault::reached("greeting.taken");
      return socket;
    }
    if (deadline.expired() || (stop != nullptr && stop->load())) {
      return remoteError("socket transport: rank " + std::to_string(greeting.sender) +
                         " did not connect its FIFO for channel " +
                         std::to_string(greeting.channel) +
                         " in time (BRAID_TIMEOUT_MS); is it running the same collective?");
    }
    arrived_.wait_for(lock, std::chrono::milliseconds(deadline.remainingMs(kCheckMs)));
  }
}

std::optional<Socket> SocketRendezvous::tryAccept(const Greeting& greeting) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = connections_.find(greeting);
  if (found == connections_.end()) return std::nullopt;
  Socket socket = std::move(found->second);
  connections_.erase(found);
  test_fault::reached("greeting.taken");
  return socket;
}

std::optional<std::pair<Greeting, Socket>> SocketRendezvous::acceptRelayRequest(
    const Deadline& deadline, const std::atomic<bool>* stop) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    // Relay requests sort with the FIFOs they name; they are few, and only the relaying
    // process asks.
    for (auto it = connections_.begin(); it != connections_.end(); ++it) {
      if (!it->first.asksRelay()) continue;
      std::pair<Greeting, Socket> found{it->first, std::move(it->second)};
      connections_.erase(it);
      return found;
    }
    if (deadline.expired() || (stop != nullptr && stop->load())) return std::nullopt;
    arrived_.wait_for(lock, std::chrono::milliseconds(deadline.remainingMs(kCheckMs)));
  }
}

}  // namespace braid::transport::net
