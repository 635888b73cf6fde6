#include "transport/net/ib/ib_fifo.h"

#include <string>
#include <utility>

#include "transport/net/proxied_ends.h"

namespace braid::transport::ib {
namespace {

class IbSendEnd final : public net::ProxiedSendEnd {
 public:
  explicit IbSendEnd(shm::PrivateFifo fifo) : ProxiedSendEnd(std::move(fifo)) {}
  Status start(IbNetwork& network, braid::net::Socket connected, int peer, int64_t timeoutMs,
               const std::string& nic) {
    BRAID_ASSIGN_OR_RETURN(
        pump_, IbSendPump::start(network, fifo_.ref, std::move(connected), peer, timeoutMs, nic));
    return Status::success();
  }

 private:
  std::unique_ptr<IbSendPump> pump_;  // drains and detaches before the FIFO goes
};

class IbRecvEnd final : public net::ProxiedRecvEnd {
 public:
  explicit IbRecvEnd(shm::PrivateFifo fifo) : ProxiedRecvEnd(std::move(fifo)) {}
  Status start(IbNetwork& network, IbRecvPump::SocketTaker take, int peer, int64_t timeoutMs,
               const std::string& nic) {
    BRAID_ASSIGN_OR_RETURN(
        pump_, IbRecvPump::start(network, fifo_.ref, std::move(take), peer, timeoutMs, nic));
    return Status::success();
  }

 private:
  std::unique_ptr<IbRecvPump> pump_;
};

}  // namespace

Result<std::unique_ptr<SendEnd>> openIbSendEnd(IbNetwork& network, braid::net::Socket connected,
                                               size_t slotBytes, int peer, int64_t timeoutMs,
                                               const std::string& nic) {
  BRAID_ASSIGN_OR_RETURN(shm::PrivateFifo fifo, shm::createPrivateFifo(slotBytes));
  auto end = std::make_unique<IbSendEnd>(std::move(fifo));
  BRAID_TRY(end->start(network, std::move(connected), peer, timeoutMs, nic));
  return std::unique_ptr<SendEnd>(std::move(end));
}

Result<std::unique_ptr<RecvEnd>> openIbRecvEnd(IbNetwork& network, IbRecvPump::SocketTaker take,
                                               size_t slotBytes, int peer, int64_t timeoutMs,
                                               const std::string& nic) {
  BRAID_ASSIGN_OR_RETURN(shm::PrivateFifo fifo, shm::createPrivateFifo(slotBytes));
  auto end = std::make_unique<IbRecvEnd>(std::move(fifo));
  BRAID_TRY(end->start(network, std::move(take), peer, timeoutMs, nic));
  return std::unique_ptr<RecvEnd>(std::move(end));
}

}  // namespace braid::transport::ib
