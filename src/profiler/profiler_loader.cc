#include "profiler/profiler_loader.h"

#include <dlfcn.h>
#include <strings.h>

#include <mutex>

#include "base/log.h"
#include "base/plugin_library.h"

namespace braid::profiler {
namespace {

constexpr const char* kPrefix = "libnccl-profiler";

struct ProcessProfiler {
  std::mutex mutex;
  std::weak_ptr<LoadedProfiler> held;  // while a communicator holds it
  bool failed = false;                 // a load failed: not tried again, as NCCL
};

ProcessProfiler& processProfiler() {
  static ProcessProfiler process;
  return process;
}

}  // namespace

LoadedProfiler::~LoadedProfiler() {
  if (plugin_) BRAID_INFO("PROFILER/Plugin: Closing profiler plugin %s", plugin_->name().c_str());
  plugin_.reset();
  if (library_ != nullptr) dlclose(library_);
}

std::shared_ptr<LoadedProfiler> loadProfiler(const std::optional<std::string>& setting) {
  ProcessProfiler& process = processProfiler();
  std::lock_guard<std::mutex> lock(process.mutex);
  if (process.failed) return nullptr;
  if (std::shared_ptr<LoadedProfiler> held = process.held.lock()) return held;
  if (setting) {
    BRAID_INFO("NCCL_PROFILER_PLUGIN set by environment to %s", setting->c_str());
    if (strcasecmp(setting->c_str(), "none") == 0) {
      process.failed = true;
      return nullptr;
    }
  }
  std::shared_ptr<LoadedProfiler> loaded(new LoadedProfiler());
  loaded->library_ = plugins::openPluginLibrary(
      "PROFILER", plugins::pluginFiles(kPrefix, setting.value_or("")), &loaded->path_);
  if (loaded->library_ == nullptr) {
    process.failed = true;
    return nullptr;
  }
  for (const auto& symbol : profabi::kProfilerSymbols) {
    const void* table = dlsym(loaded->library_, symbol.symbol);
    if (table == nullptr) continue;
    loaded->plugin_ = adoptProfilerTable(symbol.version, table);
    BRAID_INFO("PROFILER/Plugin: Loaded %s (v%d)", loaded->plugin_->name().c_str(), symbol.version);
    break;
  }
  if (!loaded->plugin_) {
    BRAID_INFO(
        "External profiler plugin %s is unsupported (it exports none of ncclProfiler_v6 to "
        "ncclProfiler_v1)",
        loaded->path_.c_str());
    process.failed = true;
    return nullptr;
  }
  BRAID_INFO("Successfully loaded external profiler plugin %s", loaded->path_.c_str());
  process.held = loaded;
  return loaded;
}

}  // namespace braid::profiler
