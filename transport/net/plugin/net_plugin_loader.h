// Finding and loading a network plugin, as NCCL 2.30.7 does.
//
// NCCL_NET_PLUGIN (or BRAID_NET_PLUGIN) says what to try:
//   unset             libnccl-net.so
//   none              nothing: the built-in transports
//   a list, a,b,...   each entry in order, until one loads, initializes and has a device
// and each entry is tried first as dlopen takes it (a file name found on the library path, or a
// path), then, where it is neither a path nor a name of the form lib*.so, as libnccl-net-ENTRY.so.
// A library opens with RTLD_NOW | RTLD_LOCAL (its symbols stay its own); its table is the first
// of ncclNetPlugin_v12 .. _v6 it exports. The plugin is then initialized and must report at least
// one device; NCCL_NET, where it names something other than IB or Socket, must be its name. What
// fails is said at INFO, as NCCL says it, and the next entry is tried; when none is left the
// communicator uses braid's own verbs or sockets.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "braid/status.h"
#include "transport/net/plugin/net_plugin.h"

namespace braid::transport::plugin {

class PluginProxy;

/// One entry of NCCL_NET_PLUGIN and the file names dlopen is asked for, in order.
struct PluginCandidate {
  std::string entry;
  std::vector<std::string> files;
};

/// What `setting` (NCCL_NET_PLUGIN's value; nullopt when unset) asks to try, in order. Pure.
std::vector<PluginCandidate> pluginCandidates(const std::optional<std::string>& setting);

/// A plugin library that loaded, initialized and has devices: its table, its devices, and the
/// proxy thread that drives its transfers (started on first use). Unloaded (finalized, the
/// library closed) when the last communicator using it goes.
class LoadedNetPlugin {
 public:
  ~LoadedNetPlugin();
  LoadedNetPlugin(const LoadedNetPlugin&) = delete;
  LoadedNetPlugin& operator=(const LoadedNetPlugin&) = delete;

  NetPlugin& net() { return *net_; }
  const NetPlugin& net() const { return *net_; }
  const std::vector<DeviceProps>& devices() const { return devices_; }
  /// The proxy shared by every FIFO end over this plugin in the process.
  PluginProxy& proxy();
  /// From any thread: a call starts; the proxy, where one runs, stops pausing now.
  void expectWork();
  /// "NAME (vN, PATH)", for messages.
  std::string describe() const;

 private:
  friend Result<std::shared_ptr<LoadedNetPlugin>> loadNetPlugin(
      const std::optional<std::string>& setting, const std::string& netName);
  LoadedNetPlugin() = default;

  void* library_ = nullptr;  // dlopen's handle, closed last
  std::unique_ptr<NetPlugin> net_;
  bool initialized_ = false;
  std::vector<DeviceProps> devices_;
  std::mutex proxyMutex_;  // proxy()'s creation, which communicators of several threads may ask
  std::unique_ptr<PluginProxy> proxy_;
  std::atomic<PluginProxy*> running_{nullptr};  // proxy_, once made: for expectWork
};

/// Tries the candidates of `setting` in order and returns the first plugin that loads,
/// initializes and has a device (and, where `netName` is not empty, whose name it is,
/// case-insensitively); null, having said why at INFO, when none does. The plugin is shared: a
/// second communicator asking for the same setting and name while the first holds it gets the
/// same one, initialized once.
Result<std::shared_ptr<LoadedNetPlugin>> loadNetPlugin(const std::optional<std::string>& setting,
                                                       const std::string& netName);

}  // namespace braid::transport::plugin
