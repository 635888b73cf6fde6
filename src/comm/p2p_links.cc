// Links' point-to-point side (links.h): the connections a pair of ranks makes the first time
// it exchanges a message.
//
// No handshake is needed to connect a pair: segment names are a function of
// the communicator and the two ranks, the receiver creates its end when it
// first receives from a peer, and the sender opens it once it exists
// (retrying without blocking, so that other transfers of the batch move in
// the meantime). The sender unlinks the name once it has opened it. A pair on
// two hosts gets a socket FIFO: the sender connects, and the receiving end
// waits for the connection on its own thread, so neither blocks the batch.
#include <string>

#include "base/log.h"
#include "comm/links.h"
#include "transport/shm/shm_fifo.h"

namespace braid::comm {

class Links::P2pEnds final : public exec::P2pLinks {
 public:
  explicit P2pEnds(Links& links) : l_(links), rank_(links.members_.rank) {}

  Result<transport::RecvEnd*> recvFrom(int peer) override {
    auto& end = l_.p2pRecv_[peer];
    if (!end && l_.members_.onOtherHost(peer)) {
      BRAID_ASSIGN_OR_RETURN(end, l_.network_.awaitFifo(peer, greeting(peer, rank_), slotBytes()));
      BRAID_TRACE("p2p: socket FIFO from rank %d awaited", peer);
    }
    if (!end) {
      BRAID_ASSIGN_OR_RETURN(end, transport::shm::createRecvEnd(name(peer, rank_), slotBytes()));
      BRAID_TRACE("p2p: made the FIFO from rank %d", peer);
    }
    return end.get();
  }

  Result<transport::SendEnd*> trySendTo(int peer) override {
    auto& end = l_.p2pSend_[peer];
    if (!end && l_.members_.onOtherHost(peer)) {
      BRAID_ASSIGN_OR_RETURN(end,
                             l_.network_.connectFifo(peer, greeting(rank_, peer), slotBytes()));
      BRAID_TRACE("p2p: socket FIFO to rank %d connected", peer);
    }
    if (!end) {
      std::string segment = name(rank_, peer);
      BRAID_ASSIGN_OR_RETURN(end, transport::shm::tryOpenSendEnd(segment, slotBytes()));
      if (!end) return static_cast<transport::SendEnd*>(nullptr);
      BRAID_TRY(transport::shm::unlinkSegment(segment));
      BRAID_TRACE("p2p: opened the FIFO to rank %d", peer);
    }
    return end.get();
  }

 private:
  // A pair on two hosts: a socket FIFO, named by the pair on the point-to-point nonce.
  transport::net::Greeting greeting(int sender, int receiver) const {
    return transport::net::Greeting::of(l_.p2pNonce_, sender, receiver, 0,
                                        static_cast<int>(algo::Protocol::kSimple));
  }
  std::string name(int sender, int receiver) const {
    return transport::shm::segmentName(l_.p2pNonce_, sender, receiver, 0);
  }
  size_t slotBytes() const { return (l_.slotBytes_ / kP2pSlotDivisor) & ~static_cast<size_t>(63); }

  Links& l_;
  const int rank_;
};

Status Links::runP2p(const std::vector<exec::P2pTask>& tasks, kernels::engine::WaitRecord* waits) {
  if (p2pRecv_.empty()) {
    p2pRecv_.resize(members_.nranks);
    p2pSend_.resize(members_.nranks);
  }
  P2pEnds ends(*this);
  return exec::runP2p(members_.rank, tasks, ends, waitContext(), waits);
}

}  // namespace braid::comm
