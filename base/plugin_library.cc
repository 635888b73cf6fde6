#include "base/plugin_library.h"

#include <dlfcn.h>
#include <link.h>

#include "base/log.h"

namespace braid::plugins {
namespace {

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The library a handle came from, as the dynamic linker found it (a full path where it
// searched); `fallback` where it cannot say.
std::string libraryPath(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr ||
      map->l_name[0] == '\0') {
    return fallback;
  }
  return map->l_name;
}

}  // namespace

std::vector<std::string> pluginFiles(const char* prefix, const std::string& entry) {
  if (entry.empty()) return {std::string(prefix) + ".so"};
  std::vector<std::string> files{entry};
  const bool path = entry.find('/') != std::string::npos;
  const bool libraryName = entry.compare(0, 3, "lib") == 0 && endsWith(entry, ".so");
  if (!path && !libraryName) files.push_back(std::string(prefix) + "-" + entry + ".so");
  return files;
}

void* openPluginLibrary(const char* kind, const std::vector<std::string>& files,
                        std::string* path) {
  std::string missing;
  for (const std::string& file : files) {
    void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      *path = libraryPath(handle, file);
      return handle;
    }
    const char* error = dlerror();
    const std::string why = error != nullptr ? error : "";
    if (why.find(file) != std::string::npos &&
        why.find("No such file or directory") != std::string::npos) {
      missing += " " + file;
    } else {
      BRAID_INFO("%s/Plugin: %s: %s", kind, file.c_str(), why.c_str());
    }
  }
  if (!missing.empty()) BRAID_INFO("%s/Plugin: Could not find:%s", kind, missing.c_str());
  return nullptr;
}

}  // namespace braid::plugins
