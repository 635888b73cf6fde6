// FIFOs of host communicators between ranks on different hosts, over verbs.
//
// As with sockets (transport/net/socket/socket_fifo.h), the executor keeps a SendEnd / RecvEnd over
// a FIFO in this process's memory; the difference is what moves the slots. Here the communicator's
// verbs proxy writes each posted slot straight into the receiver's local FIFO with RDMA
// (ib_fifo_pump.h), so a slot's bytes cross once and no thread of either side copies them.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/socket.h"
#include "braid/status.h"
#include "transport/connection.h"
#include "transport/net/ib/ib_fifo_pump.h"

namespace braid::transport::ib {

/// The executor's end of a FIFO to `peer` on another host, whose receiving end is at the other
/// end of `connected` (a socket from the rendezvous, used for the handshake only). Its queue
/// pairs start on port `nic` ("mlx5_0:1", the one the topology planned for the FIFO's channel)
/// where this process opened it, else where IbNetwork::portFor spreads them.
Result<std::unique_ptr<SendEnd>> openIbSendEnd(IbNetwork& network, braid::sockets::Socket connected,
                                               size_t slotBytes, int peer, int64_t timeoutMs,
                                               const std::string& nic = "");

/// The executor's end of a FIFO from `peer`; the proxy takes the sender's connection with
/// `take` whenever it arrives, so this never waits.
Result<std::unique_ptr<RecvEnd>> openIbRecvEnd(IbNetwork& network, IbRecvPump::SocketTaker take,
                                               size_t slotBytes, int peer, int64_t timeoutMs,
                                               const std::string& nic = "");

}  // namespace braid::transport::ib
