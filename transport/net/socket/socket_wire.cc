// sendSlot and SocketLink (socket_wire.h).
#include "transport/net/socket/socket_wire.h"

#include <errno.h>

#include "base/log.h"
#include "transport/net/socket/socket_fault.h"

namespace braid::transport::socket {

using braid::sockets::ConnectionEnds;
using braid::sockets::IoEnd;
using braid::sockets::IoResult;
using braid::sockets::Socket;

IoResult sendSlot(const Socket& socket, uint64_t word, const void* data, size_t bytes) {
  const bool breaks = nextSlotBreaks();
  // The word and the bytes in one sendmsg: one system call per slot, and one segment where the
  // slot is small (TCP_NODELAY).
  if (!breaks)
    return braid::sockets::sendAllv(socket, &word, sizeof(word), data, bytes, Deadline::never());
  IoResult io = braid::sockets::sendAll(socket, &word, sizeof(word), Deadline::never());
  if (io.ok()) {
    BRAID_WARN(
        "socket transport: breaking the connection %s after a slot's word "
        "(BRAID_SOCKET_EMULATE_FAULT)",
        braid::sockets::describe(braid::sockets::connectionEnds(socket)).c_str());
    socket.shutdown();
    io.end = IoEnd::kPeerClosed;
    io.sysErrno = ECONNRESET;
    io.onSend = true;
  }
  return io;
}

void SocketLink::broke(const char* what, const ConnectionEnds& ends, const IoResult& io,
                       bool midSlot, bool goingAway) const {
  // The peer closed in order: at a slot's boundary, with no reset.
  const bool orderly = io.end == IoEnd::kPeerClosed && io.sysErrno == 0 && !midSlot;
  std::string why = "socket: " + std::string(what) + " rank " + std::to_string(peer_) + " over " +
                    braid::sockets::describe(ends) + ": " + io.describe();
  if (io.end == IoEnd::kPeerClosed && io.sysErrno == 0 && midSlot)
    why += " in the middle of a slot";
  if (orderly) {
    BRAID_INFO("%s", why.c_str());
    return;
  }
  report(why, goingAway);
}

void SocketLink::broke(const std::string& what, const ConnectionEnds& ends, bool goingAway) const {
  report("socket: rank " + std::to_string(peer_) + " over " + braid::sockets::describe(ends) +
             ": " + what,
         goingAway);
}

void SocketLink::report(const std::string& why, bool goingAway) const {
  BRAID_WARN("%s", why.c_str());
  if (!goingAway && onFailure_) onFailure_(peer_, why);
}

}  // namespace braid::transport::socket
