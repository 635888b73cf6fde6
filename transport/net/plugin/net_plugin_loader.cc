#include "transport/net/plugin/net_plugin_loader.h"

#include <dlfcn.h>
#include <strings.h>

#include <map>
#include <mutex>
#include <sstream>
#include <utility>

#include "base/log.h"
#include "base/plugin_library.h"
#include "transport/net/plugin/net_plugin_abi.h"
#include "transport/net/plugin/plugin_proxy.h"

namespace braid::transport::plugin {
namespace {

// NCCL keeps room for 16 networks, two of them its own: 14 entries of the list at most, each a
// name of at most 254 characters.
constexpr size_t kMaxEntries = 14;
constexpr size_t kMaxEntryLength = 254;
constexpr const char* kPrefix = "libnccl-net";

// The newest table the library exports, or null (said at INFO).
std::unique_ptr<NetPlugin> probeTable(void* library, const std::string& path) {
  for (const auto& symbol : netabi::kNetSymbols) {
    const void* table = dlsym(library, symbol.net);
    if (table == nullptr) continue;
    std::unique_ptr<NetPlugin> net = adoptNetTable(symbol.version, table, path);
    BRAID_INFO("NET/Plugin: Loaded net plugin %s (v%d)", net->name().c_str(), symbol.version);
    for (const auto& coll : netabi::kNetSymbols) {
      if (dlsym(library, coll.collNet) != nullptr) {
        BRAID_INFO(
            "NET/Plugin: %s exports %s; braid does not run collective networks yet, "
            "so it is not used",
            path.c_str(), coll.collNet);
        break;
      }
    }
    return net;
  }
  BRAID_INFO(
      "External network plugin %s is unsupported (it exports none of ncclNetPlugin_v12 "
      "to ncclNetPlugin_v6)",
      path.c_str());
  return nullptr;
}

std::mutex& sharedMutex() {
  static std::mutex mutex;
  return mutex;
}
// The plugins communicators hold now, by the setting and name they were loaded for.
std::map<std::string, std::weak_ptr<LoadedNetPlugin>>& shared() {
  static std::map<std::string, std::weak_ptr<LoadedNetPlugin>> plugins;
  return plugins;
}

}  // namespace

std::vector<PluginCandidate> pluginCandidates(const std::optional<std::string>& setting) {
  if (!setting) return {{"", plugins::pluginFiles(kPrefix, "")}};
  std::vector<PluginCandidate> out;
  if (strcasecmp(setting->c_str(), "none") == 0) return out;
  std::stringstream list(*setting);
  std::string entry;
  while (std::getline(list, entry, ',')) {
    if (entry.empty()) continue;
    if (out.size() == kMaxEntries) {
      BRAID_INFO("NCCL_NET_PLUGIN list contains more than %zu plugins, ignoring the rest",
                 kMaxEntries);
      break;
    }
    if (entry.size() > kMaxEntryLength) {
      BRAID_INFO(
          "NCCL_NET_PLUGIN list contains a plugin name %s longer than %zu characters, "
          "ignoring it.",
          entry.c_str(), kMaxEntryLength);
      continue;
    }
    out.push_back({entry, plugins::pluginFiles(kPrefix, entry)});
  }
  return out;
}

LoadedNetPlugin::~LoadedNetPlugin() {
  proxy_.reset();
  if (initialized_) net_->finalize();
  net_.reset();
  if (library_ != nullptr) dlclose(library_);
}

PluginProxy& LoadedNetPlugin::proxy() {
  std::lock_guard<std::mutex> lock(proxyMutex_);
  if (!proxy_) {
    proxy_ = std::make_unique<PluginProxy>();
    running_.store(proxy_.get(), std::memory_order_release);
  }
  return *proxy_;
}

void LoadedNetPlugin::expectWork() {
  if (PluginProxy* p = running_.load(std::memory_order_acquire)) p->expectWork();
}

std::string LoadedNetPlugin::describe() const {
  return net_->name() + " (v" + std::to_string(net_->version()) + ", " + net_->path() + ")";
}

namespace {

// Initializes `loaded`'s plugin and reads its devices; false (said at INFO) where it cannot be
// used: init failed, no device, a device braid cannot drive.
bool initialize(LoadedNetPlugin& loaded, bool* initialized, std::vector<DeviceProps>* devices) {
  NetPlugin& net = loaded.net();
  Status status = net.init();
  *initialized = status.ok();
  Result<int> count = status.ok() ? net.devices() : Result<int>(status);
  if (count.ok() && count.value() <= 0) {
    status = invalidUsage("it reports no device");
  } else if (!count.ok()) {
    status = count.status();
  }
  for (int dev = 0; status.ok() && dev < count.value(); ++dev) {
    Result<DeviceProps> props = net.properties(dev);
    if (!props.ok()) {
      status = props.status();
    } else if (props.value().deviceType != 0) {
      status = invalidUsage("device " + std::to_string(dev) +
                            " asks for device offload (netDeviceType " +
                            std::to_string(props.value().deviceType) + "), which braid lacks");
    } else {
      BRAID_INFO("NET/Plugin: %s dev %d: %s", net.name().c_str(), dev,
                 props.value().describe().c_str());
      devices->push_back(props.value());
    }
  }
  if (status.ok()) {
    BRAID_INFO("Initialized NET plugin %s", net.name().c_str());
    return true;
  }
  BRAID_INFO("Failed to initialize NET plugin %s: %s", net.name().c_str(),
             status.message().c_str());
  return false;
}

}  // namespace

Result<std::shared_ptr<LoadedNetPlugin>> loadNetPlugin(const std::optional<std::string>& setting,
                                                       const std::string& netName) {
  if (setting) BRAID_INFO("NCCL_NET_PLUGIN set by environment to %s", setting->c_str());
  const std::string key = (setting ? "=" + *setting : std::string("unset")) + "\n" + netName;
  std::lock_guard<std::mutex> lock(sharedMutex());
  if (std::shared_ptr<LoadedNetPlugin> held = shared()[key].lock()) return held;
  for (const PluginCandidate& candidate : pluginCandidates(setting)) {
    std::shared_ptr<LoadedNetPlugin> loaded(new LoadedNetPlugin());
    std::string path;
    loaded->library_ = plugins::openPluginLibrary("NET", candidate.files, &path);
    if (loaded->library_ == nullptr) continue;
    loaded->net_ = probeTable(loaded->library_, path);
    if (!loaded->net_) continue;
    BRAID_INFO("Successfully loaded external network plugin %s", path.c_str());
    if (!netName.empty() && strcasecmp(netName.c_str(), loaded->net_->name().c_str()) != 0) {
      BRAID_INFO("NET/Plugin: %s is not NCCL_NET=%s; not used", loaded->net_->name().c_str(),
                 netName.c_str());
      continue;
    }
    if (!initialize(*loaded, &loaded->initialized_, &loaded->devices_)) continue;
    shared()[key] = loaded;
    return loaded;
  }
  return std::shared_ptr<LoadedNetPlugin>();
}

}  // namespace braid::transport::plugin
