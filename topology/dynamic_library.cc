#include "topology/dynamic_library.h"

#include <dlfcn.h>

#include <utility>

namespace braid::topology {

Result<DynamicLibrary> DynamicLibrary::open(const std::string& soname) {
  void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return systemError("cannot load " + soname + ": " + (why ? why : "unknown dlopen error"));
  }
  return DynamicLibrary(handle, soname);
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), soname_(std::move(other.soname_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    soname_ = std::move(other.soname_);
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

Status DynamicLibrary::lookup(const char* symbol, void** address) const {
  dlerror();  // clear a stale error so that a null symbol value is told from a missing one
  void* found = dlsym(handle_, symbol);
  if (found == nullptr) {
    const char* why = dlerror();
    return systemError(soname_ + " lacks " + symbol + (why ? std::string(" (") + why + ")" : ""));
  }
  *address = found;
  return Status::success();
}

}  // namespace braid::topology
