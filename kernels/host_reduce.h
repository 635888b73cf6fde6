// Vectorized host loops: dst[i] = op(a[i], b[i]) for a (datatype, op) pair.
//
// The executors look up one function pointer per collective call and run it
// on every slice, so the dispatch on type and operator happens once, not per
// element. dst may alias a or b (in-place reduction); a and b may alias.
#pragma once

#include <cstddef>

#include "braid/status.h"
#include "braid/types.h"

namespace braid::kernels {

using HostReduceFn = void (*)(void* dst, const void* a, const void* b, size_t count);
/// dst1[i] = dst2[i] = op(a[i], b[i]): one pass for a step that both keeps
/// and forwards its result (recvReduceCopySend), instead of reduce + copy.
using HostReduce2Fn = void (*)(void* dst1, void* dst2, const void* a, const void* b, size_t count);

/// The loops for one (type, op) pair.
struct HostReduceFns {
  HostReduceFn reduce = nullptr;
  HostReduce2Fn reduce2 = nullptr;
};

/// The loops for (type, op); an error naming the pair when braid does not
/// implement it yet.
Result<HostReduceFns> hostReduceFns(DataType type, RedOp op);

/// Shorthand for hostReduceFns(type, op).reduce.
Result<HostReduceFn> hostReduceFn(DataType type, RedOp op);

/// dst1 = dst2 = src, reading src once (recvCopySend).
void copyTwice(void* dst1, void* dst2, const void* src, size_t bytes);

/// dst = src for the executors' copies into and out of FIFO slots. A plain
/// vector loop: glibc's memcpy switches to `rep movsb` for large sizes, which
/// on some CPUs (AMD Zen among them) runs several times slower than vector
/// loads and stores when the lines come from or go to another core.
void copyBytes(void* dst, const void* src, size_t bytes);

}  // namespace braid::kernels
