// FIFOs between ranks on different hosts, over TCP.
//
// The executor never talks to the network: it sees the same SendEnd and RecvEnd as on one host,
// backed by a FIFO in this process's memory (a shm FIFO, so the waits and slot arithmetic are
// the ones the executor already runs). A proxy thread per FIFO end moves slots between that
// local FIFO and a TCP connection:
//
//   sender host:   executor -> local FIFO -> [send proxy] -> socket
//   receiver host: socket -> [recv proxy] -> local FIFO -> executor
//
// Each slot travels as an 8-byte length and its bytes (socket_wire.h). Back-pressure is the
// FIFOs': the send proxy takes a slot only once it is posted and hands it back once the socket
// took its bytes; the receive proxy reads a slot's bytes only into a free slot of its local FIFO,
// so a slow receiver stops reading the socket and TCP's window stops the sender. The executor
// never waits for the network, only for its FIFO, with its own deadline and abort flag. A
// connection that breaks under a proxy is told to the communicator (socket_wire.h), which ends
// those waits.
//
// Why a proxy thread per FIFO end and not one per process: each thread blocks in the one place
// it can next make progress (its FIFO's futex or its socket), so a slot moves with one wake-up
// and no polling, and a FIFO that is slow cannot hold up another's. A host rank has two per ring
// channel. With BRAID_SOCKET_NTHREADS / BRAID_NSOCKS_PERTHREAD above 1, a FIFO's slots are
// striped over several connections and threads instead (socket_stripes.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "base/socket.h"
#include "braid/status.h"
#include "transport/connection.h"
#include "transport/link_failure.h"
#include "transport/net/socket/socket_stripes.h"

namespace braid::transport::socket {

/// The executor's end of a FIFO to a rank on another host, whose receiving end is at the other
/// end of `connected` (made by openSocketRecvEnd there). `peer` names that rank in errors;
/// `watch` hears of a connection that breaks under the end and says when the end going away
/// need not drain (link_failure.h, socket_wire.h).
Result<std::unique_ptr<SendEnd>> openSocketSendEnd(braid::sockets::Socket connected,
                                                   size_t slotBytes, int peer,
                                                   LinkWatch watch = {});

/// The executor's end of a FIFO from a rank on another host, whose sending end is at the other
/// end of `connected`.
Result<std::unique_ptr<RecvEnd>> openSocketRecvEnd(braid::sockets::Socket connected,
                                                   size_t slotBytes, int peer,
                                                   LinkWatch watch = {});

/// Waits for a FIFO's connection; gives up (with an error) once `stop` is set.
using SocketConnector =
    std::function<Result<braid::sockets::Socket>(const std::atomic<bool>& stop)>;

/// The same, for a connection that has not arrived yet: returns at once, and the end's proxy
/// thread calls `connect` to wait for it. Until it comes the end has no slots, so a receive waits
/// as for a slow sender, with its own deadline. What a receiver uses where it must not block
/// (a batch of sends and receives, which may wait for this rank's own sends first).
Result<std::unique_ptr<RecvEnd>> openSocketRecvEnd(SocketConnector connect, size_t slotBytes,
                                                   int peer, LinkWatch watch = {});

/// The striped ends (socket_stripes.h): `connected` holds the layout's connections in order;
/// `connect` waits for connection number i on the receiving proxy's thread i / per-thread.
Result<std::unique_ptr<SendEnd>> openStripedSocketSendEnd(
    std::vector<braid::sockets::Socket> connected, size_t slotBytes, int peer, StripeLayout layout,
    LinkWatch watch = {});
Result<std::unique_ptr<RecvEnd>> openStripedSocketRecvEnd(StripeConnector connect, size_t slotBytes,
                                                          int peer, StripeLayout layout,
                                                          LinkWatch watch = {});

}  // namespace braid::transport::socket
