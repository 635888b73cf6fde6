// ncclCommRegister's registrations of one communicator: tracked, so that a deregistration is
// checked, though no path reads them yet (the FIFOs copy).
#pragma once

#include <cstddef>
#include <map>

#include "braid/status.h"

namespace braid::comm {

class Registrations {
 public:
  /// Remembers `bytes` at `buffer`; the handle is `buffer`. Fails for a NULL or empty buffer and
  /// for one registered already.
  Result<void*> add(void* buffer, size_t bytes) {
    if (buffer == nullptr) return invalidArgument("buffer is NULL");
    if (bytes == 0) return invalidArgument("size is 0");
    if (!spans_.emplace(buffer, bytes).second) {
      return invalidUsage("buffer is registered with this communicator already");
    }
    return buffer;
  }
  /// Forgets the registration `handle`; fails for one that is not live.
  Status remove(void* handle) {
    if (handle == nullptr) return invalidArgument("handle is NULL");
    if (spans_.erase(handle) == 0) {
      return invalidArgument("handle is not a live registration of this communicator");
    }
    return Status::success();
  }

 private:
  std::map<void*, size_t> spans_;  ///< start -> bytes
};

}  // namespace braid::comm
