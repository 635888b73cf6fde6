// Point-to-point on a communicator: the connections a pair of ranks makes
// the first time it exchanges a message, and Comm::sendRecv.
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
#include "comm_impl.h"
#include "exec/p2p_executor.h"
#include "p2p_batches.h"
#include "transport/shm/shm_fifo.h"

namespace braid {
namespace {

// FIFOs for point-to-point are a quarter of the ring's: every pair that
// talks gets one, so an all-to-all of N ranks makes N(N-1) of them.
constexpr size_t kP2pSlotDivisor = 4;

class ShmP2pLinks final : public exec::P2pLinks {
 public:
  explicit ShmP2pLinks(Comm::Impl& c) : c_(c) {}

  Result<transport::RecvEnd*> recvFrom(int peer) override {
    auto& end = c_.p2pRecv[peer];
    if (!end && c_.onOtherHost(peer)) {
      BRAID_ASSIGN_OR_RETURN(end, c_.awaitNetworkFifo(peer, greeting(peer, c_.rank), slotBytes()));
      BRAID_TRACE("p2p: socket FIFO from rank %d awaited", peer);
    }
    if (!end) {
      BRAID_ASSIGN_OR_RETURN(end, transport::shm::createRecvEnd(name(peer, c_.rank), slotBytes()));
      BRAID_TRACE("p2p: made the FIFO from rank %d", peer);
    }
    return end.get();
  }

  Result<transport::SendEnd*> trySendTo(int peer) override {
    auto& end = c_.p2pSend[peer];
    if (!end && c_.onOtherHost(peer)) {
      BRAID_ASSIGN_OR_RETURN(end,
                             c_.connectNetworkFifo(peer, greeting(c_.rank, peer), slotBytes()));
      BRAID_TRACE("p2p: socket FIFO to rank %d connected", peer);
    }
    if (!end) {
      std::string segment = name(c_.rank, peer);
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
    return transport::net::Greeting::of(c_.p2pNonce, sender, receiver, 0,
                                        static_cast<int>(algo::Protocol::kSimple));
  }
  std::string name(int sender, int receiver) const {
    return transport::shm::segmentName(c_.p2pNonce, sender, receiver, 0);
  }
  size_t slotBytes() const { return (c_.slotBytes / kP2pSlotDivisor) & ~static_cast<size_t>(63); }

  Comm::Impl& c_;
};

Status checkOp(const P2pOp& op, int nranks) {
  BRAID_TRY(checkRank(op.peer, nranks, "peer"));
  BRAID_TRY(checkDataType(op.type));
  if (op.count > 0 && op.buffer == nullptr) {
    return invalidArgument(std::string(op.kind == P2pOp::Kind::kSend ? "sendbuff" : "recvbuff") +
                           " is NULL with count > 0");
  }
  return Status::success();
}

}  // namespace

Status Comm::sendRecv(const std::vector<P2pOp>& ops, void* stream) {
  Impl& c = *impl_;
  ActiveCall active(c.activeCalls);
  log::ScopedLogRank logRank(c.rank);
  for (const auto& op : ops) BRAID_TRY(checkOp(op, c.nranks));
  BRAID_TRY(c.checkUsable());
  std::string what = "send/recv:";
  for (size_t i = 0; i < ops.size() && i < 8; ++i) {
    what += std::string(ops[i].kind == P2pOp::Kind::kSend ? " send to " : " receive from ") +
            "rank " + std::to_string(ops[i].peer) + " (" +
            std::to_string(ops[i].count * dataTypeSize(ops[i].type)) + " B)";
  }
  if (ops.size() > 8) what += " and " + std::to_string(ops.size() - 8) + " more";
  // A host batch notes its waits in the recorder's first channel (exec/p2p_executor.h).
  c.flightSeq = c.flight->begin(what, "point-to-point",
                                c.gpu ? std::vector<uint32_t>{} : std::vector<uint32_t>{1});
  const Status s = sendRecvRecorded(ops, stream);
  c.flight->end(c.flightSeq, s);
  if (!s.ok()) c.noteFailure(s, "send/recv");
  return s;
}

Status Comm::sendRecvRecorded(const std::vector<P2pOp>& ops, void* stream) {
  Impl& c = *impl_;
  if (c.gpu) return c.explainFailure(c.sendRecvOnGpu(ops, stream));
  std::vector<exec::P2pTask> tasks;
  tasks.reserve(ops.size());
  for (const auto& op : ops) {
    exec::P2pTask t;
    t.send = op.kind == P2pOp::Kind::kSend;
    t.peer = op.peer;
    t.sendBuffer = op.buffer;
    t.recvBuffer = op.buffer;
    t.bytes = op.count * dataTypeSize(op.type);
    tasks.push_back(t);
  }
  Status s = c.runP2pTasks(tasks);
  if (!s.ok()) {
    s = c.explainFailure(s);
    c.broken = s;
    BRAID_WARN("send/recv failed: %s", s.message().c_str());
  }
  return s;
}

Status Comm::Impl::runP2pTasks(const std::vector<exec::P2pTask>& tasks) {
  if (p2pRecv.empty()) {
    p2pRecv.resize(nranks);
    p2pSend.resize(nranks);
  }
  ShmP2pLinks links(*this);
  return exec::runP2p(rank, tasks, links, waitContext(), flight->hostWaits());
}

// Gather, scatter and all-to-all are batches of sends and receives: every
// byte crosses one FIFO once, which no ring schedule beats for these.
Status Comm::gather(const void* input, void* output, size_t count, DataType type, int root,
                    void* stream) {
  BRAID_TRY(checkRank(root, size(), "root"));
  return sendRecv(gatherBatch(rank(), size(), input, output, count, type, root), stream);
}

Status Comm::scatter(const void* input, void* output, size_t count, DataType type, int root,
                     void* stream) {
  BRAID_TRY(checkRank(root, size(), "root"));
  return sendRecv(scatterBatch(rank(), size(), input, output, count, type, root), stream);
}

Status Comm::allToAll(const void* input, void* output, size_t count, DataType type, void* stream) {
  return sendRecv(allToAllBatch(size(), input, output, count, type), stream);
}

// The model sees a batch as the bytes it sends and receives: every transfer
// is in flight at once, as runP2p advances them.
Result<double> Comm::estimateP2pUs(const std::vector<P2pOp>& ops) const {
  const Impl& c = *impl_;
  tune::P2pQuery q;
  q.nranks = c.nranks;
  for (const auto& op : ops) {
    BRAID_TRY(checkRank(op.peer, c.nranks, "peer"));
    BRAID_TRY(checkDataType(op.type));
    const size_t bytes = op.count * dataTypeSize(op.type);
    if (op.peer == c.rank) {
      // A self-send and its receive are one copy: count it once.
      if (op.kind == P2pOp::Kind::kSend) q.selfBytes += bytes;
    } else if (op.kind == P2pOp::Kind::kSend) {
      q.sendBytes += bytes;
    } else {
      q.recvBytes += bytes;
    }
  }
  return tune::predictP2pUs(c.model, q);
}

}  // namespace braid
