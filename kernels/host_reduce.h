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

/// The loop for (type, op); an error naming the pair when braid does not
/// implement it yet.
Result<HostReduceFn> hostReduceFn(DataType type, RedOp op);

}  // namespace braid::kernels
