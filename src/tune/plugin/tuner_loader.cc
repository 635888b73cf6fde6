#include "tune/plugin/tuner_loader.h"

#include <dlfcn.h>
#include <strings.h>

#include <mutex>

#include "base/log.h"
#include "base/plugin_library.h"

namespace braid::tune {
namespace {

constexpr const char* kPrefix = "libnccl-tuner";

struct Shared {
  std::mutex mutex;
  std::weak_ptr<LoadedTuner> held;  // the tuner while some communicator holds it
  bool failed = false;              // a load found none: not tried again, as in NCCL
};

Shared& shared() {
  static Shared* state = new Shared();  // outlives every communicator's destructor
  return *state;
}

// The network plugin's library, opened again so that the tuner holds it on its own.
void* openNetLibrary(const std::string& netLibrary) {
  if (netLibrary.empty()) return nullptr;
  void* handle = dlopen(netLibrary.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) handle = dlopen(netLibrary.c_str(), RTLD_NOW | RTLD_LOCAL);
  return handle;
}

// The newest table the library exports, or null.
std::unique_ptr<TunerPlugin> probeTable(void* library, const std::string& path) {
  for (const auto& symbol : tunerabi::kTunerSymbols) {
    const void* table = dlsym(library, symbol.symbol);
    if (table == nullptr) continue;
    std::unique_ptr<TunerPlugin> plugin = adoptTunerTable(symbol.version, table, path);
    BRAID_INFO("TUNER/Plugin: Using %s (v%d)", plugin->name().c_str(), symbol.version);
    return plugin;
  }
  return nullptr;
}

// Opens the tuner's library as `setting` names it, else the network plugin's; sets `*named` to
// whether it came from NCCL_TUNER_PLUGIN's search.
void* openLibrary(const std::optional<std::string>& setting, const std::string& netLibrary,
                  std::string* path, bool* named) {
  void* library = plugins::openPluginLibrary(
      "TUNER", plugins::pluginFiles(kPrefix, setting.value_or("")), path);
  *named = library != nullptr;
  if (library == nullptr) {
    library = openNetLibrary(netLibrary);
    *path = netLibrary;
  }
  return library;
}

}  // namespace

LoadedTuner::~LoadedTuner() {
  if (plugin_) BRAID_INFO("TUNER/Plugin: Closing tuner: '%s'", plugin_->name().c_str());
  plugin_.reset();
  if (library_ != nullptr) dlclose(library_);
}

std::shared_ptr<LoadedTuner> acquireTuner(const std::optional<std::string>& setting,
                                          const std::string& netLibrary) {
  Shared& s = shared();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.failed) return nullptr;
  if (std::shared_ptr<LoadedTuner> held = s.held.lock()) return held;
  if (setting) BRAID_INFO("NCCL_TUNER_PLUGIN set by environment to %s", setting->c_str());
  if (setting && strcasecmp(setting->c_str(), "none") == 0) {
    s.failed = true;
    return nullptr;
  }
  std::shared_ptr<LoadedTuner> loaded(new LoadedTuner());
  std::string path;
  bool named = false;
  loaded->library_ = openLibrary(setting, netLibrary, &path, &named);
  if (loaded->library_ == nullptr) {
    s.failed = true;
    return nullptr;
  }
  loaded->plugin_ = probeTable(loaded->library_, path);
  if (!loaded->plugin_) {
    if (named) BRAID_INFO("External tuner plugin %s is unsupported", path.c_str());
    s.failed = true;
    return nullptr;
  }
  if (named) BRAID_INFO("Successfully loaded external tuner plugin %s", path.c_str());
  s.held = loaded;
  return loaded;
}

}  // namespace braid::tune
