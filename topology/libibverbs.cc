// The process's libibverbs.so.1: see libibverbs.h.
#include "topology/libibverbs.h"

#include <cstring>

#include "base/env.h"
#include "base/log.h"

namespace braid::topology {
namespace {

/// ibv_fork_init, where the library has it and the environment has not asked for it already.
void initForFork(const DynamicLibrary& library) {
  // rdma-core's own variables, not braid's settings: when either is set, the library makes
  // itself fork safe when it initialises.
  if (env::raw("RDMAV_FORK_SAFE") || env::raw("IBV_FORK_SAFE")) return;
  int (*forkInit)() = nullptr;
  if (!library.resolve("ibv_fork_init", &forkInit).ok()) return;
  if (int rc = forkInit(); rc != 0) {
    BRAID_WARN(
        "verbs: ibv_fork_init failed (%s); a process that forks after registering memory "
        "may corrupt it (set RDMAV_FORK_SAFE=1 to have libibverbs try at its start)",
        strerror(rc));
  }
}

Result<const DynamicLibrary*> load() {
  BRAID_ASSIGN_OR_RETURN(DynamicLibrary library, DynamicLibrary::open("libibverbs.so.1"));
  // Never closed, not even by a static destructor at exit: libibverbs keeps what it allocated
  // (the device list, its providers' state) reachable only from its own statics, which an
  // unloaded library no longer has, so LeakSanitizer would report it from an unknown module.
  static const DynamicLibrary* kept = new DynamicLibrary(std::move(library));
  initForFork(*kept);
  return kept;
}

}  // namespace

Result<const DynamicLibrary*> libibverbs() {
  static const Result<const DynamicLibrary*> loaded = load();  // once, thread safe
  return loaded;
}

}  // namespace braid::topology
