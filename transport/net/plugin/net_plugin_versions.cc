// The adapters from each version's table (net_plugin_abi.h) to NetPlugin (net_plugin.h): one
// template, the versions' differences as `if constexpr` on the version number, so that a
// difference is written once where it starts and every later version inherits it.
#include <cinttypes>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>

#include "base/log.h"
#include "base/proxy_events.h"
#include "transport/net/plugin/net_plugin.h"
#include "transport/net/plugin/net_plugin_abi.h"

namespace braid::transport::plugin {
namespace {

using namespace braid::netabi;  // NOLINT(google-build-using-namespace): the ABI's names

// A plugin's log lines go to braid's log, at the level the plugin asked, marked as its own.
void pluginLog(ncclDebugLogLevel level, unsigned long /*flags*/, const char* /*file*/, int /*line*/,
               const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  plugins::writePluginLog("NET", level, fmt, args);
  va_end(args);
}

// What a plugin's profiler callback hands back as its event: the event and whom to tell.
struct NetEvent {
  std::shared_ptr<profile::ProxyEventSink> sink;
  void* handle;
};

// The profiler callback of v10 and later plugins (NCCL's ncclProfilerCallback): a plugin's own
// events, started under the transfer's proxy step (pHandle, a profile::NetEventParent, or null
// where no profiler listens), updated and stopped through the handle it was given.
ncclResult_t profilerCallback(void** eHandle, int type, void* pHandle, int64_t pluginId,
                              void* extData) {
  if (eHandle == nullptr) return ncclSuccess;
  if (type == kNetEventStart) {
    *eHandle = nullptr;
    const auto* parent = static_cast<const profile::NetEventParent*>(pHandle);
    if (parent == nullptr || !parent->sink) return ncclSuccess;
    void* handle = parent->sink->startNetEvent(parent->step, pluginId, extData);
    // The plugin holds the event until it stops it: the handle crosses the C ABI.
    if (handle != nullptr) {
      *eHandle = std::make_unique<NetEvent>(NetEvent{parent->sink, handle}).release();
    }
    return ncclSuccess;
  }
  auto* event = static_cast<NetEvent*>(*eHandle);
  if (event == nullptr) return ncclSuccess;
  if (type == kNetEventUpdate || type == kNetEventUpdateAndStop) {
    event->sink->updateNetEvent(event->handle, extData);
  }
  if (type == kNetEventStop || type == kNetEventUpdateAndStop) {
    event->sink->stop(event->handle);
    std::unique_ptr<NetEvent> gone(event);
    *eHandle = nullptr;
  }
  return ncclSuccess;
}

template <typename Table, typename Props>
struct Tables {
  using type = Table;
  using props = Props;
};
template <int V>
struct TableOf;
template <>
struct TableOf<6> : Tables<ncclNet_v6_t, ncclNetProperties_v6_t> {};
template <>
struct TableOf<7> : Tables<ncclNet_v7_t, ncclNetProperties_v7_t> {};
template <>
struct TableOf<8> : Tables<ncclNet_v8_t, ncclNetProperties_v8_t> {};
template <>
struct TableOf<9> : Tables<ncclNet_v9_t, ncclNetProperties_v9_t> {};
template <>
struct TableOf<10> : Tables<ncclNet_v10_t, ncclNetProperties_v10_t> {};
template <>
struct TableOf<11> : Tables<ncclNet_v11_t, ncclNetProperties_v11_t> {};
template <>
struct TableOf<12> : Tables<ncclNet_v12_t, ncclNetProperties_v12_t> {};

// The properties of any version, in the newest's units.
template <int V>
DeviceProps convert(const typename TableOf<V>::props& p) {
  DeviceProps d;
  d.name = p.name != nullptr ? p.name : "";
  d.pciPath = p.pciPath != nullptr ? p.pciPath : "";
  d.guid = p.guid;
  d.ptrSupport = p.ptrSupport;
  d.speedMbps = p.speed;
  d.port = p.port;
  d.latencyUs = p.latency;
  d.maxComms = p.maxComms;
  d.maxRecvs = p.maxRecvs;
  d.maxP2pBytes = kMaxNetSizeBeforeV9;
  if constexpr (V >= 7) d.deviceType = p.netDeviceType;
  if constexpr (V >= 8) d.regIsGlobal = p.regIsGlobal != 0;
  if constexpr (V >= 9) {
    d.forceFlush = p.forceFlush != 0;
    d.maxP2pBytes = p.maxP2pBytes;
  }
  return d;
}

template <int V>
class VersionedNet final : public NetPlugin {
 public:
  using Table = typename TableOf<V>::type;
  VersionedNet(const Table* table, const std::string& path)
      : NetPlugin(table->name != nullptr ? table->name : "(unnamed)", V, path), t_(table) {}

  Status init() override {
    if constexpr (V >= 11) {
      ncclNetCommConfig_v12_t config{kTrafficClassUndef};
      // One context per process: braid loads a plugin once and shares it (net_plugin_loader.h).
      return failed(t_->init(&ctx_, /*commId=*/0, &config, pluginLog, profilerCallback), "init");
    } else if constexpr (V == 10) {
      return failed(t_->init(pluginLog, profilerCallback), "init");
    } else {
      return failed(t_->init(pluginLog), "init");
    }
  }
  void finalize() override {
    if constexpr (V >= 11) {
      if (t_->finalize != nullptr) {
        const Status s = failed(t_->finalize(ctx_), "finalize");
        if (!s.ok()) BRAID_WARN("%s", s.message().c_str());
      }
    }
  }
  Result<int> devices() override {
    int n = 0;
    BRAID_TRY(failed(t_->devices(&n), "devices"));
    return n;
  }
  Result<DeviceProps> properties(int dev) override {
    typename TableOf<V>::props p{};
    BRAID_TRY(failed(t_->getProperties(dev, &p), "getProperties"));
    return convert<V>(p);
  }
  Status listen(int dev, void* handle, void** listenComm) override {
    if constexpr (V >= 11) {
      return failed(t_->listen(ctx_, dev, handle, listenComm), "listen");
    } else {
      return failed(t_->listen(dev, handle, listenComm), "listen");
    }
  }
  Status connect(int dev, void* handle, void** sendComm) override {
    // From v7 a null device handle asks for no device offload.
    ncclNetDeviceHandle_v7_t* devComm = nullptr;
    if constexpr (V >= 11) {
      return failed(t_->connect(ctx_, dev, handle, sendComm, &devComm), "connect");
    } else if constexpr (V == 10) {
      ncclNetCommConfig_v10_t config{kTrafficClassUndef};
      return failed(t_->connect(dev, &config, handle, sendComm, &devComm), "connect");
    } else if constexpr (V >= 7) {
      return failed(t_->connect(dev, handle, sendComm, &devComm), "connect");
    } else {
      return failed(t_->connect(dev, handle, sendComm), "connect");
    }
  }
  Status accept(void* listenComm, void** recvComm) override {
    if constexpr (V >= 7) {
      ncclNetDeviceHandle_v7_t* devComm = nullptr;
      return failed(t_->accept(listenComm, recvComm, &devComm), "accept");
    } else {
      return failed(t_->accept(listenComm, recvComm), "accept");
    }
  }
  Status regMr(void* comm, void* data, size_t size, int type, void** mhandle) override {
    if constexpr (V >= 8) {
      return failed(t_->regMr(comm, data, size, type, mhandle), "regMr");
    } else {
      if (size > INT_MAX) return tooLarge("regMr", size);
      return failed(t_->regMr(comm, data, static_cast<int>(size), type, mhandle), "regMr");
    }
  }
  Status regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                     void** mhandle) override {
    if (t_->regMrDmaBuf == nullptr) return missing("regMrDmaBuf");
    return failed(t_->regMrDmaBuf(comm, data, size, type, offset, fd, mhandle), "regMrDmaBuf");
  }
  Status deregMr(void* comm, void* mhandle) override {
    return failed(t_->deregMr(comm, mhandle), "deregMr");
  }
  Status isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
               void** request) override {
    if constexpr (V >= 10) {
      return failed(t_->isend(sendComm, data, size, tag, mhandle, phandle, request), "isend");
    } else if constexpr (V == 9) {
      return failed(t_->isend(sendComm, data, size, tag, mhandle, request), "isend");
    } else {
      if (size > INT_MAX) return tooLarge("isend", size);
      return failed(t_->isend(sendComm, data, static_cast<int>(size), tag, mhandle, request),
                    "isend");
    }
  }
  Status irecv(void* recvComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
               void** request) override {
    void* datas[1] = {data};
    int tags[1] = {tag};
    void* mhandles[1] = {mhandle};
    if constexpr (V >= 9) {
      size_t sizes[1] = {size};
      if constexpr (V >= 10) {
        void* phandles[1] = {phandle};
        return failed(t_->irecv(recvComm, 1, datas, sizes, tags, mhandles, phandles, request),
                      "irecv");
      } else {
        return failed(t_->irecv(recvComm, 1, datas, sizes, tags, mhandles, request), "irecv");
      }
    } else {
      if (size > INT_MAX) return tooLarge("irecv", size);
      int sizes[1] = {static_cast<int>(size)};
      return failed(t_->irecv(recvComm, 1, datas, sizes, tags, mhandles, request), "irecv");
    }
  }
  Status iflush(void* recvComm, void* data, size_t size, void* mhandle, void** request) override {
    if (t_->iflush == nullptr) return missing("iflush");
    if (size > INT_MAX) return tooLarge("iflush", size);
    void* datas[1] = {data};
    int sizes[1] = {static_cast<int>(size)};
    void* mhandles[1] = {mhandle};
    return failed(t_->iflush(recvComm, 1, datas, sizes, mhandles, request), "iflush");
  }
  Status test(void* request, bool* done, size_t* size) override {
    int finished = 0;
    int sizes[1] = {0};
    BRAID_TRY(failed(t_->test(request, &finished, sizes), "test"));
    *done = finished != 0;
    *size = sizes[0] < 0 ? 0 : static_cast<size_t>(sizes[0]);
    return Status::success();
  }
  Status closeSend(void* comm) override { return failed(t_->closeSend(comm), "closeSend"); }
  Status closeRecv(void* comm) override { return failed(t_->closeRecv(comm), "closeRecv"); }
  Status closeListen(void* comm) override { return failed(t_->closeListen(comm), "closeListen"); }

 private:
  Status tooLarge(const char* call, size_t size) const {
    return invalidUsage("NET plugin " + name() + " (v" + std::to_string(V) + "): " + call + " of " +
                        std::to_string(size) + " bytes, over what its int sizes hold");
  }

  // A call braid needs that the table leaves null.
  Status missing(const char* call) const {
    return invalidUsage("NET plugin " + name() + " (v" + std::to_string(V) +
                        "): its table has no " + call +
                        ", which device memory it claims to reach (ptrSupport) needs");
  }

  const Table* t_;
  void* ctx_ = nullptr;  // v11 and later: what init gave
};

}  // namespace

Status NetPlugin::failed(int result, const char* call) const {
  if (result == ncclSuccess) return Status::success();
  // ncclResult_t's names, as the plugin's authors know them.
  static const char* const kNames[] = {
      "ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
      "ncclInvalidArgument", "ncclInvalidUsage",       "ncclRemoteError", "ncclInProgress"};
  const bool known = result > 0 && result <= static_cast<int>(ErrorCode::kRemoteError);
  const ErrorCode code = known ? static_cast<ErrorCode>(result) : ErrorCode::kInternalError;
  return Status(code, "NET plugin " + name_ + " (" + path_ + ", v" + std::to_string(version_) +
                          "): " + call + " failed with " +
                          (known ? kNames[result] : "result " + std::to_string(result)));
}

std::string DeviceProps::describe() const {
  char text[512];
  snprintf(text, sizeof(text),
           "%s pci=%s guid=0x%" PRIx64
           " ptr=%s%s%s speed=%d Mb/s port=%d latency=%.1f us "
           "maxComms=%d maxRecvs=%d",
           name.c_str(), pciPath.empty() ? "-" : pciPath.c_str(), guid,
           (ptrSupport & netabi::kPtrHost) != 0 ? "host" : "",
           (ptrSupport & netabi::kPtrCuda) != 0 ? "+cuda" : "",
           (ptrSupport & netabi::kPtrDmabuf) != 0 ? "+dmabuf" : "", speedMbps, port, latencyUs,
           maxComms, maxRecvs);
  return text;
}

std::unique_ptr<NetPlugin> adoptNetTable(int version, const void* table, const std::string& path) {
  switch (version) {
    case 12:
      return std::make_unique<VersionedNet<12>>(static_cast<const ncclNet_v12_t*>(table), path);
    case 11:
      return std::make_unique<VersionedNet<11>>(static_cast<const ncclNet_v11_t*>(table), path);
    case 10:
      return std::make_unique<VersionedNet<10>>(static_cast<const ncclNet_v10_t*>(table), path);
    case 9:
      return std::make_unique<VersionedNet<9>>(static_cast<const ncclNet_v9_t*>(table), path);
    case 8:
      return std::make_unique<VersionedNet<8>>(static_cast<const ncclNet_v8_t*>(table), path);
    case 7:
      return std::make_unique<VersionedNet<7>>(static_cast<const ncclNet_v7_t*>(table), path);
    case 6:
      return std::make_unique<VersionedNet<6>>(static_cast<const ncclNet_v6_t*>(table), path);
    default:
      return nullptr;
  }
}

}  // namespace braid::transport::plugin
