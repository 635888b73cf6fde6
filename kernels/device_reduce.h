// Elementwise reduction on the GPU: dst[i] = op(a[i], b[i]), with the same
// functors as the host loops (kernels/reduce_op.h), so both give identical
// bits. It is the building block of the CUDA executor to come; today it is
// used by the GPU tests that check the device arithmetic against the host's.
#pragma once

#include <cstddef>

#include "braid/status.h"
#include "braid/types.h"

namespace braid::kernels {

/// Whether a CUDA device is usable in this process (false without CUDA support).
bool cudaDeviceAvailable();

/// Launches the reduction of `count` elements on `stream` (a cudaStream_t;
/// nullptr is the default stream). Pointers are device memory.
Status deviceReduce(DataType type, RedOp op, void* dst, const void* a, const void* b, size_t count,
                    void* stream);

}  // namespace braid::kernels
