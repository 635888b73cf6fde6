// What a network transport tells its communicator when a connection to a peer breaks under a
// live communicator: a verbs completion or post that failed, a socket that was reset or ended
// in the middle of a slot. The communicator then ends every call waiting on it at once
// (comm::Health::noteLinkFailure) instead of leaving them to their deadline.
#pragma once

#include <functional>
#include <string>

namespace braid::transport {

/// Called at most once per broken FIFO end, on its proxy's thread, with the peer's rank and
/// words that say where it broke (the NIC, or the connection's addresses and interface) and how
/// (the verbs status, the system's error text). Empty: the break is only logged.
using LinkFailureHandler = std::function<void(int peer, const std::string& why)>;

}  // namespace braid::transport
