// ncclSend / ncclRecv. Outside a group each completes before it returns on
// a host communicator (so a send needs its receive posted by then), and is
// enqueued on the stream on a GPU one; inside a group they are fused at
// ncclGroupEnd and may be issued in any order.
#include <optional>

#include "api/api_events.h"
#include "api/group.h"

using braid::Status;
using braid::api::report;

namespace {

ncclResult_t pointToPoint(const char* name, braid::P2pOp::Kind kind, void* buffer, size_t count,
                          ncclDataType_t datatype, int peer, ncclComm_t comm, cudaStream_t stream) {
  auto c = braid::api::commFrom(comm);
  if (!c.ok()) return report(c.status().withContext(name));
  auto type = braid::api::dataTypeFrom(datatype);
  if (!type.ok()) return report(type.status().withContext(name));
  braid::P2pOp op;
  op.kind = kind;
  op.peer = peer;
  op.buffer = buffer;
  op.count = count;
  op.type = type.value();
  std::optional<braid::api::ApiEvent> api;
  if (c.value()->profilerPlugin() != nullptr) {
    api.emplace(*c.value(), braid::api::p2pApiFields(*c.value(), op, stream), false);
    op.profilerApiEvent = api->handle();
  }
  // Checked now, also in a group (Comm::checkSendRecv), and not again when it runs.
  auto checked = c.value()->checkSendRecv({op});
  if (!checked.ok()) return report(checked.status().withContext(name));
  if (api) api->stop();  // queued, or about to run
  return braid::api::sendRecvOrDefer(c.value(), checked.value(), stream);
}

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclSend, const void* sendbuff, size_t count, ncclDataType_t datatype,
               int peer, ncclComm_t comm, cudaStream_t stream) {
  // The executor only reads a send's buffer.
  return pointToPoint("ncclSend", braid::P2pOp::Kind::kSend, const_cast<void*>(sendbuff), count,
                      datatype, peer, comm, stream);
}

BRAID_NCCL_API(ncclResult_t, ncclRecv, void* recvbuff, size_t count, ncclDataType_t datatype,
               int peer, ncclComm_t comm, cudaStream_t stream) {
  return pointToPoint("ncclRecv", braid::P2pOp::Kind::kRecv, recvbuff, count, datatype, peer, comm,
                      stream);
}
