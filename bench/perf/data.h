// Test data for braid-perf: deterministic inputs per (rank, element) and the
// expected outputs, so that each rank checks its own output without a
// reference run.
//
// Element `index` of rank `rank`'s input is a small integer chosen from
// (rank, index, seed). Inputs of a reduction are further chosen so that the
// reduction is exact in the element type whatever order the ranks combine in:
// a ring and a tree must then agree bit for bit with the expected value. The
// checks know where each output element comes from (a collective's layout,
// collectives.h) and compare it with the input it must equal or the reduction
// it must hold.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nccl.h"

namespace braid::perf {

/// What the inputs of one call are made for.
struct Inputs {
  ncclDataType_t type = ncclFloat;
  ncclRedOp_t op = ncclSum;  ///< used when `reduces`
  bool reduces = false;      ///< the collective reduces with `op`; else it only moves data
  int nranks = 1;
  uint64_t seed = 0;
};

/// Writes elements firstIndex .. firstIndex + count - 1 of rank `rank`'s input to buf.
void fillInput(const Inputs& in, int rank, size_t firstIndex, void* buf, size_t count);

/// Counts elements of buf (count of them) that differ from rank srcRank's
/// input elements srcIndex .. srcIndex + count - 1.
int64_t countWrongCopy(const Inputs& in, int srcRank, size_t srcIndex, const void* buf,
                       size_t count);

/// Counts elements of buf that differ from the reduction (in.op) over every
/// rank's input elements srcIndex .. srcIndex + count - 1.
int64_t countWrongReduce(const Inputs& in, size_t srcIndex, const void* buf, size_t count);

}  // namespace braid::perf
