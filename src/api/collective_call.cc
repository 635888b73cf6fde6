// The C API's path of a collective (collective_call.h).
#include "api/collective_call.h"

#include <memory>
#include <optional>
#include <vector>

#include "api/api_events.h"
#include "api/group.h"

namespace braid::api {
namespace {

// A queued variable-count call's own copies of its arrays.
struct Blocks {
  std::vector<size_t> counts;
  std::vector<size_t> offsets;
};

// Points a queued call's arrays at copies that live as long as the queued call.
std::shared_ptr<Blocks> copyBlocks(CollectiveCall& call, int nranks) {
  auto blocks = std::make_shared<Blocks>();
  if (call.blockCounts != nullptr) {
    blocks->counts.assign(call.blockCounts, call.blockCounts + nranks);
    call.blockCounts = blocks->counts.data();
  }
  if (call.blockOffsets != nullptr) {
    blocks->offsets.assign(call.blockOffsets, call.blockOffsets + nranks);
    call.blockOffsets = blocks->offsets.data();
  }
  return blocks;
}

// What ncclGroupSimulateEnd adds up for a queued collective.
Result<double> estimate(const Comm& comm, const CollectiveCall& call) {
  if (call.variableCounts) return comm.estimateVUs(call.collective, call.blockCounts, call.type);
  return comm.estimateUs(call.collective, call.count, call.type);
}

}  // namespace

ncclResult_t runCollective(const char* name, ncclComm_t handle, ncclDataType_t datatype,
                           ncclRedOp_t op, CollectiveCall call) {
  Result<Comm*> comm = commFrom(handle);
  if (!comm.ok()) return report(comm.status().withContext(name));
  Comm* c = comm.value();
  Result<DataType> type = dataTypeFrom(datatype);
  if (!type.ok()) return report(type.status().withContext(name));
  call.type = type.value();
  if (reduces(call.collective)) {
    Result<RedOp> redOp = redOpFrom(op);
    if (!redOp.ok()) return report(redOp.status().withContext(name));
    call.op = redOp.value();
  }
  std::optional<ApiEvent> api;
  if (c->profilerPlugin() != nullptr) {
    api.emplace(*c, collectiveApiFields(*c, call), true);
    call.profilerApiEvent = api->handle();
  }
  if (groupDepth() == 0) {
    if (api) api->stop();
    return report(c->runCollective(call).withContext(name));
  }
  std::shared_ptr<Blocks> blocks;
  if (call.variableCounts) blocks = copyBlocks(call, c->size());
  Result<CheckedCollective> checked = c->checkCollective(call);
  if (!checked.ok()) return report(checked.status().withContext(name));
  return runOrDefer(
      c,
      [c, name, checked = checked.value(), blocks] {
        return c->runCollective(checked).withContext(name);
      },
      [c, call, blocks] { return estimate(*c, call); });
}

ncclResult_t runBatch(const char* name, Comm* comm, Result<CheckedBatch> batch, void* stream) {
  if (!batch.ok()) return report(batch.status().withContext(name));
  if (groupDepth() == 0) return report(comm->sendRecv(batch.value(), stream).withContext(name));
  return runOrDefer(
      comm,
      [comm, name, checked = batch.value(), stream] {
        return comm->sendRecv(checked, stream).withContext(name);
      },
      [comm, checked = batch.value()] { return comm->estimateP2pUs(checked.ops()); });
}

}  // namespace braid::api
