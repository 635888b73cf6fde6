// A shared library opened with dlopen and closed when the object goes.
//
// braid reaches libibverbs and NVML only this way, so that libnccl.so.2 has
// no link-time dependency on rdma-core or the GPU driver and still loads on
// machines without them.
#pragma once

#include <string>
#include <utility>

#include "braid/status.h"

namespace braid::topology {

class DynamicLibrary {
 public:
  /// dlopen(soname, RTLD_NOW | RTLD_LOCAL); a failure carries dlerror()'s text.
  static Result<DynamicLibrary> open(const std::string& soname);

  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

  /// Looks `symbol` up and stores it in `*function`; fails, naming the symbol
  /// and the library, when the library lacks it (an older version).
  template <typename Function>
  Status resolve(const char* symbol, Function* function) const {
    void* address = nullptr;
    BRAID_TRY(lookup(symbol, &address));
    *function = reinterpret_cast<Function>(address);
    return Status::success();
  }

  const std::string& soname() const { return soname_; }

 private:
  DynamicLibrary(void* handle, std::string soname) : handle_(handle), soname_(std::move(soname)) {}
  Status lookup(const char* symbol, void** address) const;

  void* handle_ = nullptr;
  std::string soname_;
};

}  // namespace braid::topology
