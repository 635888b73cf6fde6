#include "profiler/comm_profiler.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "base/log.h"
#include "profiler/nccl_names.h"

namespace braid::profiler {
namespace {

using namespace braid::profabi;  // NOLINT(google-build-using-namespace): the event types

// What NCCL asks of the mask before it starts each kind of event: the kind itself or a kind
// below it, which needs its parent.
constexpr uint64_t kGroupNeeds =
    kGroup | kColl | kP2p | kProxyOp | kProxyStep | kKernelCh | kNetPlugin;
constexpr uint64_t kCollNeeds = kColl | kProxyOp | kProxyStep | kKernelCh | kNetPlugin;
constexpr uint64_t kP2pNeeds = kP2p | kProxyOp | kProxyStep | kKernelCh | kNetPlugin;
constexpr uint64_t kProxyOpNeeds = kProxyOp | kProxyStep | kNetPlugin;
// The API events, as NCCL asks: a group API event when the plugin wants any event at all, a
// call's when it wants the call's or anything under it.
constexpr uint64_t kGroupApiNeeds = kGroupApi | kCollApi | kP2pApi | kKernelLaunch | kGroup |
                                    kColl | kP2p | kProxyOp | kProxyStep | kKernelCh | kNetPlugin |
                                    kCeColl | kCeSync | kCeBatch;
constexpr uint64_t kCollApiNeeds = kCollApi | kColl | kProxyOp | kProxyStep | kKernelCh |
                                   kNetPlugin | kCeColl | kCeSync | kCeBatch;
constexpr uint64_t kP2pApiNeeds = kP2pApi | kP2p | kProxyOp | kProxyStep | kKernelCh | kNetPlugin;
constexpr uint64_t kProxyStepNeeds = kProxyStep | kNetPlugin;

// "Profiler event mask: 0x1a (26) - Enabled: Coll ProxyOp ProxyStep", as NCCL says it.
void logMask(uint64_t mask) {
  if (mask == 0) return;
  constexpr const char* kNames[] = {"Group",     "Coll",      "P2p",      "ProxyOp",
                                    "ProxyStep", "ProxyCtrl", "KernelCh", "NetPlugin",
                                    "GroupApi",  "CollApi",   "P2pApi",   "KernelLaunch",
                                    "CeColl",    "CeSync",    "CeBatch"};
  std::string enabled;
  for (int bit = 0; bit < 15; ++bit) {
    if (mask & (uint64_t{1} << bit)) enabled += std::string(kNames[bit]) + " ";
  }
  BRAID_INFO("Profiler event mask: 0x%llx (%llu) - Enabled: %s",
             static_cast<unsigned long long>(mask), static_cast<unsigned long long>(mask),
             enabled.c_str());
}

}  // namespace

std::shared_ptr<CommProfiler> CommProfiler::open(const std::optional<std::string>& setting,
                                                 const CommIdentity& comm) {
  std::shared_ptr<LoadedProfiler> loaded = loadProfiler(setting);
  if (!loaded) return nullptr;
  void* context = nullptr;
  int mask = 0;
  errno = 0;
  const ncclResult_t err = loaded->plugin().init(&context, &mask, comm);
  if (err != ncclSuccess) {
    BRAID_INFO("Profiler init failed with error '%d': %s. Continue without profiler.",
               static_cast<int>(err), strerror(errno));
    return nullptr;
  }
  logMask(static_cast<uint32_t>(mask));
  return std::shared_ptr<CommProfiler>(
      new CommProfiler(std::move(loaded), context, static_cast<uint32_t>(mask), comm.rank));
}

CommProfiler::CommProfiler(std::shared_ptr<LoadedProfiler> loaded, void* context, uint64_t mask,
                           int rank)
    : loaded_(std::move(loaded)),
      plugin_(loaded_->plugin()),
      context_(context),
      mask_(mask),
      rank_(rank),
      pid_(getpid()) {}

CommProfiler::~CommProfiler() { plugin_.finalize(context_); }

std::shared_ptr<profile::ProxyEventSink> CommProfiler::proxySink() {
  if ((mask_ & kProxyOpNeeds) == 0) return nullptr;
  return shared_from_this();
}

void* CommProfiler::startEvent(Event& event) {
  event.rank = rank_;
  return plugin_.start(context_, event);
}

void CommProfiler::openGroup() { groupOpen_ = true; }

void CommProfiler::closeGroup() {
  groupOpen_ = false;
  if (groupStarted_ && group_ != nullptr) plugin_.stop(group_);
  groupStarted_ = false;
  group_ = nullptr;
}

void CommProfiler::startGroupIfNone() {
  if (groupStarted_) return;
  groupStarted_ = true;
  groupImplicit_ = !groupOpen_;
  group_ = nullptr;
  if ((mask_ & kGroupNeeds) == 0) return;
  Event e;
  e.type = kGroup;
  group_ = startEvent(e);
}

void CommProfiler::startColl(const CollFields& fields) {
  startGroupIfNone();
  const uint8_t func = funcNumber(fields.func);
  void* handle = nullptr;
  if ((mask_ & kCollNeeds) != 0) {
    Event e;
    e.type = kColl;
    e.parent = group_;
    e.coll = fields;
    e.coll.seqNumber = func < 8 ? seqNumbers_[func] : 0;
    handle = startEvent(e);
  }
  if (func < 8) ++seqNumbers_[func];
  std::lock_guard<std::mutex> lock(callMutex_);
  coll_ = handle;
  p2p_.clear();
  callNumber_.fetch_add(1, std::memory_order_release);
}

void CommProfiler::startP2p(const std::vector<P2pFields>& ops) {
  startGroupIfNone();
  std::vector<P2pHandle> handles;
  if ((mask_ & kP2pNeeds) != 0) {
    for (const P2pFields& op : ops) {
      Event e;
      e.type = kP2p;
      e.parent = group_;
      e.p2p = op;
      handles.push_back({op.peer, strcmp(op.func, "Send") == 0, startEvent(e)});
    }
  }
  std::lock_guard<std::mutex> lock(callMutex_);
  coll_ = nullptr;
  p2p_ = std::move(handles);
  callNumber_.fetch_add(1, std::memory_order_release);
}

void CommProfiler::stopCall() {
  void* coll = nullptr;
  std::vector<P2pHandle> p2p;
  {
    std::lock_guard<std::mutex> lock(callMutex_);
    std::swap(coll, coll_);
    std::swap(p2p, p2p_);
  }
  if (coll != nullptr) plugin_.stop(coll);
  for (const P2pHandle& h : p2p) {
    if (h.handle != nullptr) plugin_.stop(h.handle);
  }
  if (groupStarted_ && groupImplicit_) closeGroup();
}

void* CommProfiler::startGroupApi(bool graphCaptured, int groupDepth) {
  if ((mask_ & kGroupApiNeeds) == 0) return nullptr;
  Event e;
  e.type = kGroupApi;
  e.api.graphCaptured = graphCaptured;
  e.groupDepth = groupDepth;
  return startEvent(e);
}

void CommProfiler::recordGroupApi(void* handle, profabi::ncclProfilerEventState_t state) {
  if (handle != nullptr) plugin_.recordGroupApi(handle, state);
}

void* CommProfiler::startCallApi(void* groupApi, const ApiFields& fields, bool collective) {
  if ((mask_ & (collective ? kCollApiNeeds : kP2pApiNeeds)) == 0) return nullptr;
  Event e;
  e.type = collective ? kCollApi : kP2pApi;
  e.parent = groupApi;
  e.api = fields;
  return startEvent(e);
}

void* CommProfiler::startKernelLaunch(void* stream) {
  if ((mask_ & kKernelLaunch) == 0) return nullptr;
  Event e;
  e.type = kKernelLaunch;
  e.parent = launchParent_;
  e.api.stream = stream;
  return startEvent(e);
}

void* CommProfiler::startOp(const profile::ProxyOpWhere& where, uint64_t* call) {
  Event e;
  e.type = kProxyOp;
  {
    std::lock_guard<std::mutex> lock(callMutex_);
    *call = callNumber_.load(std::memory_order_acquire);
    e.parent = coll_;
    for (const P2pHandle& h : p2p_) {
      if (h.peer == where.peer && h.isSend == where.isSend) e.parent = h.handle;
    }
  }
  e.proxyOp.pid = pid_;
  e.proxyOp.channelId = static_cast<uint8_t>(where.channel);
  e.proxyOp.peer = where.peer;
  e.proxyOp.nSteps = 0;  // not known when its first slot moves: a proxy takes slots as they come
  e.proxyOp.chunkSize = static_cast<int>(where.slotBytes);
  e.proxyOp.isSend = where.isSend ? 1 : 0;
  return startEvent(e);
}

void* CommProfiler::startStep(void* op, int step, bool /*isSend*/) {
  if ((mask_ & kProxyStepNeeds) == 0) return nullptr;
  Event e;
  e.type = kProxyStep;
  e.parent = op;
  e.step = step;
  return startEvent(e);
}

void CommProfiler::stepMoving(void* step, bool isSend, size_t bytes) {
  plugin_.recordStep(step, isSend ? ncclProfilerProxyStepSendWait : ncclProfilerProxyStepRecvWait,
                     bytes);
}

void CommProfiler::stop(void* handle) { plugin_.stop(handle); }

void* CommProfiler::startNetEvent(void* step, int64_t pluginId, void* data) {
  if ((mask_ & kNetPlugin) == 0) return nullptr;
  Event e;
  e.type = kNetPlugin;
  e.parent = step;
  e.netPlugin.id = pluginId;
  e.netPlugin.data = data;
  return startEvent(e);
}

void CommProfiler::updateNetEvent(void* handle, void* data) { plugin_.recordNet(handle, data); }

}  // namespace braid::profiler
