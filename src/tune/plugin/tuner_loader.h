// Finding and loading a tuner plugin, as NCCL 2.30.7 does, once per process.
//
// NCCL_TUNER_PLUGIN (or BRAID_TUNER_PLUGIN) says what to try:
//   unset        libnccl-tuner.so
//   none         nothing
//   NAME         NAME as dlopen takes it, then libnccl-tuner-NAME.so (base/plugin_library.h)
//   a path       that file
// When no library opens, the library of the network plugin the communicator loaded is searched
// (aws-ofi-nccl ships its tuner there). Its table is the first of ncclTunerPlugin_v6 .. _v2 it
// exports. The first communicator loads it; every communicator made while one holds it shares
// it; the last to go closes it. A load that found nothing is not tried again in the process, as
// in NCCL. Each communicator then has a context of its own (TunerSession).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "tune/plugin/tuner_plugin.h"

namespace braid::tune {

/// A tuner library that loaded: its handle and table. Closed when the last holder goes.
class LoadedTuner {
 public:
  ~LoadedTuner();
  LoadedTuner(const LoadedTuner&) = delete;
  LoadedTuner& operator=(const LoadedTuner&) = delete;

  TunerPlugin& plugin() { return *plugin_; }

 private:
  friend std::shared_ptr<LoadedTuner> acquireTuner(const std::optional<std::string>& setting,
                                                   const std::string& netLibrary);
  LoadedTuner() = default;

  void* library_ = nullptr;  // dlopen's handle, closed last
  std::unique_ptr<TunerPlugin> plugin_;
};

/// The process's tuner for a new communicator: `setting` is NCCL_TUNER_PLUGIN (nullopt when
/// unset), `netLibrary` the path of the network plugin library the communicator loaded (empty:
/// none). Null, having said why at INFO, when none loads.
std::shared_ptr<LoadedTuner> acquireTuner(const std::optional<std::string>& setting,
                                          const std::string& netLibrary);

}  // namespace braid::tune
