// Test data for braid-perf: deterministic inputs per (rank, element) and the
// expected result, so each rank checks its own output without a reference run.
//
// Values are small integers, so float sums and products are exact in any
// order: a ring and a tree must then agree bit for bit with the reference.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nccl.h"

namespace braid::perf {

/// Fills `count` elements of `type` with rank `rank`'s input for `op`.
void fillInput(void* buf, size_t count, ncclDataType_t type, ncclRedOp_t op, int rank,
               uint64_t seed);

/// Counts elements of `buf` that differ from the all-reduce of every rank's
/// fillInput (ranks 0..nranks-1, same seed).
int64_t countWrongAllReduce(const void* buf, size_t count, ncclDataType_t type, ncclRedOp_t op,
                            int nranks, uint64_t seed);

/// Whether braid-perf can generate and check this type (native C++ types).
bool typeSupported(ncclDataType_t type);

}  // namespace braid::perf
