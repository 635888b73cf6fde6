#include "transport/net/ib/ib_fifo.h"
#include "base/socket.h"

#include <string>
#include <utility>

#include "transport/net/proxied_ends.h"

namespace braid::transport::ib {
namespace {

using IbSendEnd = net::PumpedEnd<net::ProxiedSendEnd, IbSendPump>;
using IbRecvEnd = net::PumpedEnd<net::ProxiedRecvEnd, IbRecvPump>;

}  // namespace

Result<std::unique_ptr<SendEnd>> openIbSendEnd(IbNetwork& network, braid::sockets::Socket connected,
                                               size_t slotBytes, int peer, int64_t timeoutMs,
                                               const std::string& nic) {
  BRAID_ASSIGN_OR_RETURN(shm::PrivateFifo fifo, shm::createPrivateFifo(slotBytes));
  auto end = std::make_unique<IbSendEnd>(std::move(fifo));
  BRAID_ASSIGN_OR_RETURN(
      std::unique_ptr<IbSendPump> pump,
      IbSendPump::start(network, end->fifoRef(), std::move(connected), peer, timeoutMs, nic));
  end->setPump(std::move(pump));
  return std::unique_ptr<SendEnd>(std::move(end));
}

Result<std::unique_ptr<RecvEnd>> openIbRecvEnd(IbNetwork& network, IbRecvPump::SocketTaker take,
                                               size_t slotBytes, int peer, int64_t timeoutMs,
                                               const std::string& nic) {
  BRAID_ASSIGN_OR_RETURN(shm::PrivateFifo fifo, shm::createPrivateFifo(slotBytes));
  auto end = std::make_unique<IbRecvEnd>(std::move(fifo));
  BRAID_ASSIGN_OR_RETURN(
      std::unique_ptr<IbRecvPump> pump,
      IbRecvPump::start(network, end->fifoRef(), std::move(take), peer, timeoutMs, nic));
  end->setPump(std::move(pump));
  return std::unique_ptr<RecvEnd>(std::move(end));
}

}  // namespace braid::transport::ib
