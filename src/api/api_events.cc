// The API events of profiler plugins (api_events.h): the thread's group API event and the
// calls' events under it.
#include "api/api_events.h"

#include <algorithm>
#include <memory>

#include "api/group.h"
#include "comm/call.h"
#include "gpu/runtime.h"
#include "profiler/comm_profiler.h"
#include "profiler/nccl_names.h"

namespace braid::api {
namespace {

// The thread's group API event: started with the profiler of its first call's communicator,
// which stays alive while the event does (a communicator destroyed in the group goes after it).
struct GroupApiEvent {
  std::shared_ptr<profiler::CommProfiler> owner;
  void* handle = nullptr;
};

thread_local GroupApiEvent tlsGroupApi;

// Whether `stream` of a GPU communicator is being captured into a CUDA graph.
bool captured(const Comm& comm, void* stream) {
  if (!comm.onGpu()) return false;
  Result<bool> capturing = gpu::runtime().streamCapturing(stream);
  return capturing.ok() && capturing.value();
}

void* groupApiFor(profiler::CommProfiler& profiler, bool graphCaptured) {
  if (tlsGroupApi.owner == nullptr) {
    tlsGroupApi.owner = profiler.shared_from_this();
    tlsGroupApi.handle = profiler.startGroupApi(graphCaptured, std::max(groupDepth(), 1));
    profiler.recordGroupApi(tlsGroupApi.handle, profabi::ncclProfilerGroupStartApiStop);
  }
  return tlsGroupApi.handle;
}

}  // namespace

ApiEvent::ApiEvent(Comm& comm, const profiler::ApiFields& fields, bool collective)
    : comm_(comm), lone_(groupDepth() == 0) {
  profiler::CommProfiler& profiler = *comm.profilerPlugin();
  void* group = groupApiFor(profiler, fields.graphCaptured);
  handle_ = profiler.startCallApi(group, fields, collective);
}

ApiEvent::~ApiEvent() {
  stop();
  if (lone_) groupEnded({&comm_});
}

void ApiEvent::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (handle_ != nullptr) comm_.profilerPlugin()->stop(handle_);
  if (lone_) groupEndBegins({&comm_});
}

profiler::ApiFields collectiveApiFields(const Comm& comm, const CollectiveCall& call) {
  profiler::ApiFields f;
  f.func = collectiveName(call.collective);
  f.count = call.count;
  f.datatype = profiler::datatypeName(static_cast<int>(call.type));
  f.root = comm::rooted(call.collective) ? call.root : 0;
  f.stream = call.stream;
  f.graphCaptured = captured(comm, call.stream);
  return f;
}

profiler::ApiFields p2pApiFields(const Comm& comm, const P2pOp& op, void* stream) {
  profiler::ApiFields f;
  f.func = op.kind == P2pOp::Kind::kSend ? "Send" : "Recv";
  f.count = op.count;
  f.datatype = profiler::datatypeName(static_cast<int>(op.type));
  f.stream = stream;
  f.graphCaptured = captured(comm, stream);
  return f;
}

bool groupApiRunning() { return tlsGroupApi.owner != nullptr; }

void groupEndBegins(const std::vector<Comm*>& comms) {
  if (tlsGroupApi.owner == nullptr) return;
  tlsGroupApi.owner->recordGroupApi(tlsGroupApi.handle, profabi::ncclProfilerGroupEndApiStart);
  for (Comm* comm : comms) {
    if (profiler::CommProfiler* p = comm->profilerPlugin()) p->setLaunchParent(tlsGroupApi.handle);
  }
}

void groupEnded(const std::vector<Comm*>& comms) {
  if (tlsGroupApi.owner == nullptr) return;
  for (Comm* comm : comms) {
    if (profiler::CommProfiler* p = comm->profilerPlugin()) p->setLaunchParent(nullptr);
  }
  if (tlsGroupApi.handle != nullptr) tlsGroupApi.owner->stop(tlsGroupApi.handle);
  tlsGroupApi = {};
}

}  // namespace braid::api
