// Opening a plugin library as NCCL 2.30.7 opens its network, tuner and profiler plugins: one
// entry of NCCL_NET_PLUGIN, NCCL_TUNER_PLUGIN or NCCL_PROFILER_PLUGIN is tried first as dlopen
// takes it (a file name found on the library path, or a path), then, where it is neither a path
// nor a name of the form lib*.so, as PREFIX-ENTRY.so (libnccl-tuner-ENTRY.so, ...); no entry
// means PREFIX.so. Each library opens with RTLD_NOW | RTLD_LOCAL, so its symbols stay its own.
#pragma once

#include <string>
#include <vector>

namespace braid::plugins {

/// The files dlopen is asked for, in order, for `entry` of a plugin variable whose libraries are
/// named `prefix` ("libnccl-net"). An empty entry: PREFIX.so alone. Pure.
std::vector<std::string> pluginFiles(const char* prefix, const std::string& entry);

/// Opens the first of `files` that opens and sets `*path` to the library the dynamic linker
/// found; null when none opens. Says at INFO why the others did not, in NCCL's words and tagged
/// with `kind` ("NET", "TUNER", "PROFILER"): the missing ones together in one "Could not find"
/// line, other errors (a library that exists but does not load) each on its own.
void* openPluginLibrary(const char* kind, const std::vector<std::string>& files, std::string* path);

}  // namespace braid::plugins
