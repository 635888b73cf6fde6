// The adapters from braid's Event (profiler_plugin.h) to each version's descriptor
// (profiler_abi.h): one template, the versions' differences as `if constexpr` on the version
// number, written once where each starts (the list at the top of profiler_abi.h).
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>

#include "base/plugin_log.h"
#include "profiler/nccl_names.h"
#include "profiler/profiler_plugin.h"

namespace braid::profiler {
namespace {

using namespace braid::profabi;  // NOLINT(google-build-using-namespace): the ABI's names

// A plugin's log lines go to braid's log, at the level the plugin asked, marked as its own.
void pluginLog(plugins::ncclDebugLogLevel level, unsigned long /*flags*/, const char* /*file*/,
               int /*line*/, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  plugins::writePluginLog("PROFILER", level, fmt, args);
  va_end(args);
}

// Version V's table.
using Tables = std::tuple<ncclProfiler_v1_t, ncclProfiler_v2_t, ncclProfiler_v3_t,
                          ncclProfiler_v4_t, ncclProfiler_v5_t, ncclProfiler_v6_t>;
template <int V>
using TableOf = std::tuple_element_t<V - 1, Tables>;

// The event types each version knows: v1 and v2 have no kernel channel or network plugin
// events (v3 brings them); the API events come with v5. A type a version lacks must never
// reach it.
template <int V>
constexpr uint64_t knownTypes() {
  uint64_t types = kGroup | kColl | kP2p | kProxyOp | kProxyStep | kProxyCtrl;
  if (V >= 3) types |= kKernelCh | kNetPlugin;
  if (V >= 5) types |= kGroupApi | kCollApi | kP2pApi | kKernelLaunch;
  return types;
}

template <int V, typename Descr>
void fillColl(Descr& d, const CollFields& c, void* group) {
  if constexpr (V >= 5) {
    d.parentObj = c.apiEvent;
    d.coll.parentGroup = group;
  } else {
    d.parentObj = group;
  }
  if constexpr (V <= 3) {
    d.coll.name = nullptr;  // as NCCL gives them: gone since v4
    d.coll.commHash = 0;
  }
  d.coll.seqNumber = c.seqNumber;
  d.coll.sendBuff = c.sendBuff;
  d.coll.recvBuff = c.recvBuff;
  d.coll.count = c.count;
  d.coll.root = c.root;
  d.coll.nWarps = 0;  // braid's blocks are not warps of NCCL's kernels
  if constexpr (V == 1) {
    d.coll.func = funcNumber(c.func);
    d.coll.datatype = datatypeNumber(c.datatype);
    d.coll.algo = algoNumber(c.algo);
    d.coll.proto = protoNumber(c.proto);
    d.coll.op = 0;
    d.coll.trafficBytes = 0;
    d.coll.isCollnet = 0;
    d.coll.isNvls = 0;
  } else {
    d.coll.func = c.func;
    d.coll.datatype = c.datatype;
    d.coll.algo = c.algo;
    d.coll.proto = c.proto;
  }
  if constexpr (V == 2) d.coll.trafficBytes = 0;
  if constexpr (V <= 3) {
    d.coll.nMaxChannels = c.nChannels;
  } else {
    d.coll.nChannels = c.nChannels;
  }
}

template <int V, typename Descr>
void fillP2p(Descr& d, const P2pFields& p, void* group) {
  if constexpr (V >= 5) {
    d.parentObj = p.apiEvent;
    d.p2p.parentGroup = group;
  } else {
    d.parentObj = group;
  }
  if constexpr (V <= 3) {
    d.p2p.name = nullptr;
    d.p2p.commHash = 0;
  }
  if constexpr (V == 1) {
    d.p2p.func = funcNumber(p.func);
    d.p2p.datatype = datatypeNumber(p.datatype);
  } else {
    d.p2p.func = p.func;
    d.p2p.datatype = p.datatype;
  }
  d.p2p.buff = p.buff;
  d.p2p.count = p.count;
  d.p2p.peer = p.peer;
  if constexpr (V >= 4) d.p2p.nChannels = p.nChannels;
}

// The fields the collective and point-to-point API descriptors share.
template <typename CallApi>
void fillCallApi(CallApi& a, const ApiFields& f) {
  a.func = f.func;
  a.count = f.count;
  a.datatype = f.datatype;
  a.stream = f.stream;
  a.graphCaptured = f.graphCaptured;
}

// The API events' descriptors (v5 on): the group API, the collective and point-to-point API
// calls, and a kernel launch.
template <typename Descr>
void fillApi(Descr& d, const Event& e) {
  if (e.type == kGroupApi) {
    d.groupApi.graphCaptured = e.api.graphCaptured;
    d.groupApi.groupDepth = e.groupDepth;
  } else if (e.type == kCollApi) {
    fillCallApi(d.collApi, e.api);
    d.collApi.root = e.api.root;
  } else if (e.type == kP2pApi) {
    fillCallApi(d.p2pApi, e.api);
  } else if (e.type == kKernelLaunch) {
    d.kernelLaunch.stream = e.api.stream;
  }
}

template <int V>
class VersionedPlugin final : public ProfilerPlugin {
  using Table = TableOf<V>;
  using DescrOf = typename Table::DescrType;
  using ArgsOf = typename Table::ArgsType;

 public:
  explicit VersionedPlugin(const Table* table) : t_(table) {}
  int version() const override { return V; }
  std::string name() const override { return t_->name != nullptr ? t_->name : "(unnamed)"; }

  ncclResult_t init(void** context, int* mask, const CommIdentity& c) override {
    if constexpr (V <= 3) {
      return t_->init(context, mask);
    } else if constexpr (V == 4) {
      return t_->init(context, mask, c.commName, c.commHash, c.nNodes, c.nranks, c.rank, pluginLog);
    } else {
      return t_->init(context, c.commHash, mask, c.commName, c.nNodes, c.nranks, c.rank, pluginLog);
    }
  }

  void* start(void* context, const Event& e) override {
    if ((e.type & knownTypes<V>()) == 0) return nullptr;
    DescrOf d{};
    d.type = static_cast<decltype(d.type)>(e.type);
    d.rank = e.rank;
    d.parentObj = e.parent;
    if (e.type == kColl) {
      fillColl<V>(d, e.coll, e.parent);
    } else if (e.type == kP2p) {
      fillP2p<V>(d, e.p2p, e.parent);
    } else if (e.type == kProxyOp) {
      d.proxyOp = e.proxyOp;
    } else if (e.type == kProxyStep) {
      d.proxyStep.step = e.step;
    } else if (e.type == kNetPlugin) {
      if constexpr (V >= 3) d.netPlugin = e.netPlugin;
    } else {
      if constexpr (V >= 5) fillApi(d, e);
    }
    void* handle = nullptr;
    if (t_->startEvent(context, &handle, &d) != ncclSuccess) return nullptr;
    return handle;
  }

  void stop(void* handle) override { (void)t_->stopEvent(handle); }

  void recordStep(void* handle, ncclProfilerEventState_t state, size_t bytes) override {
    ArgsOf args{};
    // v1 to v3 carry nothing with a step's state (NCCL gives them none); v4 on, its bytes.
    if constexpr (V >= 4) args.proxyStep.transSize = bytes;
    (void)bytes;
    (void)t_->recordEventState(handle, state, &args);
  }

  void recordGroupApi(void* handle, ncclProfilerEventState_t state) override {
    if constexpr (V >= 5) (void)t_->recordEventState(handle, state, nullptr);
    (void)handle, (void)state;
  }

  void recordNet(void* handle, void* data) override {
    if constexpr (V >= 4) {
      ArgsOf args{};
      args.netPlugin.data = data;
      (void)t_->recordEventState(handle, ncclProfilerNetPluginUpdate, &args);
    }
    (void)handle, (void)data;
  }

  void finalize(void* context) override { (void)t_->finalize(context); }

 private:
  const Table* t_;
};

}  // namespace

std::unique_ptr<ProfilerPlugin> adoptProfilerTable(int version, const void* table) {
  switch (version) {
    case 1:
      return std::make_unique<VersionedPlugin<1>>(static_cast<const ncclProfiler_v1_t*>(table));
    case 2:
      return std::make_unique<VersionedPlugin<2>>(static_cast<const ncclProfiler_v2_t*>(table));
    case 3:
      return std::make_unique<VersionedPlugin<3>>(static_cast<const ncclProfiler_v3_t*>(table));
    case 4:
      return std::make_unique<VersionedPlugin<4>>(static_cast<const ncclProfiler_v4_t*>(table));
    case 5:
      return std::make_unique<VersionedPlugin<5>>(static_cast<const ncclProfiler_v5_t*>(table));
    case 6:
      return std::make_unique<VersionedPlugin<6>>(static_cast<const ncclProfiler_v6_t*>(table));
    default:
      return nullptr;
  }
}

}  // namespace braid::profiler
