// Finding and loading a profiler plugin, as NCCL 2.30.7 does.
//
// NCCL_PROFILER_PLUGIN (or BRAID_PROFILER_PLUGIN) says what to try:
//   unset    libnccl-profiler.so
//   none     nothing
//   NAME     NAME as dlopen takes it (a file on the library path, or a path), then, where it is
//            neither a path nor a lib*.so name, libnccl-profiler-NAME.so
// The library opens with RTLD_NOW | RTLD_LOCAL (base/plugin_library.h); its table is the first of
// ncclProfiler_v6 .. _v1 it exports. The plugin is loaded once per process and shared by its
// communicators, each of which calls its init (and finalize as it goes); it is closed when the
// last of them goes. A library that does not load, or exports no table, is said at INFO and not
// tried again by this process, as NCCL does.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "profiler/profiler_plugin.h"

namespace braid::profiler {

/// A profiler plugin library that loaded: its table, behind the version's adapter.
class LoadedProfiler {
 public:
  ~LoadedProfiler();
  LoadedProfiler(const LoadedProfiler&) = delete;
  LoadedProfiler& operator=(const LoadedProfiler&) = delete;

  ProfilerPlugin& plugin() { return *plugin_; }
  /// The library the dynamic linker found.
  const std::string& path() const { return path_; }

 private:
  friend std::shared_ptr<LoadedProfiler> loadProfiler(const std::optional<std::string>& setting);
  LoadedProfiler() = default;

  void* library_ = nullptr;  // dlopen's handle, closed last
  std::unique_ptr<ProfilerPlugin> plugin_;
  std::string path_;
};

/// The process's profiler plugin for `setting` (NCCL_PROFILER_PLUGIN's value; nullopt when
/// unset): loaded by the first communicator to ask, shared with the others while one holds it;
/// null (having said why at INFO) where none loads, and from then on in this process.
std::shared_ptr<LoadedProfiler> loadProfiler(const std::optional<std::string>& setting);

}  // namespace braid::profiler
