// braid::Comm's point-to-point calls: a batch of sends and receives (sendRecv), and gather,
// scatter and all-to-all, which are such batches (p2p_batches.h). Each is checked once, into a
// CheckedBatch (braid/comm.h); Calls (calls.h) runs it on Links' FIFOs or the GPU side's.
#include <string>

#include "base/log.h"
#include "comm/comm_impl.h"
#include "comm/p2p_batches.h"

namespace braid {

using comm::checkDataType;
using comm::checkRank;

namespace {

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

Result<CheckedBatch> Comm::checkSendRecv(std::vector<P2pOp> ops) const {
  for (const auto& op : ops) BRAID_TRY(checkOp(op, size()));
  return CheckedBatch(std::move(ops));
}

Status Comm::sendRecv(const CheckedBatch& batch, void* stream) {
  const gpu::DeviceGuard keep = impl_->keepCallersDevice();
  comm::ActiveCall active = impl_->health.countCall();
  log::ScopedLogRank logRank(rank());
  return impl_->calls.sendRecv(batch.ops(), stream);
}

Status Comm::sendRecv(const std::vector<P2pOp>& ops, void* stream) {
  BRAID_ASSIGN_OR_RETURN(const CheckedBatch batch, checkSendRecv(ops));
  return sendRecv(batch, stream);
}

// Gather, scatter and all-to-all are batches of sends and receives: every
// byte crosses one FIFO once, which no ring schedule beats for these.
Result<CheckedBatch> Comm::checkGather(const void* input, void* output, size_t count, DataType type,
                                       int root) const {
  BRAID_TRY(checkRank(root, size(), "root"));
  return checkSendRecv(gatherBatch(rank(), size(), input, output, count, type, root));
}

Result<CheckedBatch> Comm::checkScatter(const void* input, void* output, size_t count,
                                        DataType type, int root) const {
  BRAID_TRY(checkRank(root, size(), "root"));
  return checkSendRecv(scatterBatch(rank(), size(), input, output, count, type, root));
}

Result<CheckedBatch> Comm::checkAllToAll(const void* input, void* output, size_t count,
                                         DataType type) const {
  return checkSendRecv(allToAllBatch(size(), input, output, count, type));
}

Status Comm::gather(const void* input, void* output, size_t count, DataType type, int root,
                    void* stream) {
  BRAID_ASSIGN_OR_RETURN(const CheckedBatch batch, checkGather(input, output, count, type, root));
  return sendRecv(batch, stream);
}

Status Comm::scatter(const void* input, void* output, size_t count, DataType type, int root,
                     void* stream) {
  BRAID_ASSIGN_OR_RETURN(const CheckedBatch batch, checkScatter(input, output, count, type, root));
  return sendRecv(batch, stream);
}

Status Comm::allToAll(const void* input, void* output, size_t count, DataType type, void* stream) {
  BRAID_ASSIGN_OR_RETURN(const CheckedBatch batch, checkAllToAll(input, output, count, type));
  return sendRecv(batch, stream);
}

// The model sees a batch as the bytes it sends and receives: every transfer
// is in flight at once, as runP2p advances them.
Result<double> Comm::estimateP2pUs(const std::vector<P2pOp>& ops) const {
  tune::P2pQuery q;
  q.nranks = size();
  for (const auto& op : ops) {
    BRAID_TRY(checkRank(op.peer, size(), "peer"));
    BRAID_TRY(checkDataType(op.type));
    const size_t bytes = op.count * dataTypeSize(op.type);
    if (op.peer == rank()) {
      // A self-send and its receive are one copy: count it once.
      if (op.kind == P2pOp::Kind::kSend) q.selfBytes += bytes;
    } else if (op.kind == P2pOp::Kind::kSend) {
      q.sendBytes += bytes;
    } else {
      q.recvBytes += bytes;
    }
  }
  return tune::predictP2pUs(impl_->selector->model(), q);
}

}  // namespace braid
