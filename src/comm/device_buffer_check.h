// Whether a GPU communicator's buffers are memory its device can address: device memory,
// managed memory, or pinned host memory; not pageable host memory. Asked of the runtime
// (cudaPointerGetAttributes) once per buffer: the buffers found fine are remembered, a few of
// them, so that the calls of a training step, which reuse the same buffers, query nothing.
//
// What this gives up: memory freed and then mapped again at the same address as pageable host
// memory, passed to a call, is not refused with a message; the kernel's access fails instead.
// NVIDIA's NCCL checks no buffer at all unless NCCL_CHECK_POINTERS=1.
#pragma once

#include <array>
#include <mutex>

#include "braid/status.h"
#include "gpu/runtime.h"

namespace braid::comm {

class DeviceBufferCheck {
 public:
  /// Checks `buffer` (null passes); `name` names it in the message ("sendbuff").
  Status check(gpu::Runtime& runtime, const void* buffer, const char* name);

 private:
  static constexpr size_t kRemembered = 8;
  std::mutex mutex_;
  std::array<const void*, kRemembered> fine_{};  ///< the buffers found fine, the last kRemembered
  size_t next_ = 0;                              ///< where the next one goes
};

}  // namespace braid::comm
