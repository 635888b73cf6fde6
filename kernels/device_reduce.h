// Elementwise reductions on the GPU for every (datatype, op) pair, with the
// same functors as the host loops (kernels/reduce_op.h), so both give the
// same bits, and the same OpArgs and (pre, op, post) split as HostOp:
//
//   deviceLoad    dst = pre(in)            (premulsum; a copy for the others)
//   deviceReduce  dst = op(a, pre(b))      (b is this rank's own input)
//   deviceFinish  buf = post(buf)          (avg; nothing for the others)
//
// They are the building blocks of the CUDA executor to come; today the GPU
// tests use them to check the device arithmetic against the host's. The one
// difference left: when a float operation meets NaN, the GPU returns its
// canonical NaN where the CPU keeps an operand's payload, so NaN results
// agree in being NaN, not in their bits.
#pragma once

#include <cstddef>

#include "braid/status.h"
#include "braid/types.h"
#include "kernels/reduce_op.h"

namespace braid::kernels {

/// Whether a CUDA device is usable in this process (false without CUDA support).
bool cudaDeviceAvailable();

/// Launches dst = op(a, pre(b)) over `count` elements on `stream` (a
/// cudaStream_t; nullptr is the default stream). Pointers are device memory;
/// dst may alias a or b.
Status deviceReduce(DataType type, RedOp op, const OpArgs& args, void* dst, const void* a,
                    const void* b, size_t count, void* stream);

/// Launches dst = pre(in): premulsum's scaling, an asynchronous copy for the
/// operators without a pre (nothing when dst == in).
Status deviceLoad(DataType type, RedOp op, const OpArgs& args, void* dst, const void* in,
                  size_t count, void* stream);

/// Launches buf = post(buf): avg's division by args.nranks; nothing for the
/// operators without a post.
Status deviceFinish(DataType type, RedOp op, const OpArgs& args, void* buf, size_t count,
                    void* stream);

}  // namespace braid::kernels
