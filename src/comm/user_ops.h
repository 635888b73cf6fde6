// UserOps: the reduction operators a communicator's caller made (ncclRedOpCreatePreMulSum), and
// how any operator of a call becomes what the kernels apply.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "braid/status.h"
#include "braid/types.h"
#include "kernels/host_reduce.h"
#include "kernels/reduce_op.h"

namespace braid::comm {

/// An operator as the kernels apply it: the functors of `functor` (a user
/// op becomes kPreMulSum) with `args`; a premulsum scalar given by device
/// pointer is read from `scalarPointer` when the kernel runs.
struct OpSpec {
  RedOp functor = RedOp::kSum;
  kernels::OpArgs args;
  const void* scalarPointer = nullptr;
};

class UserOps {
 public:
  /// A premulsum operator over `type` whose scalar is `*scalar`, read now or, by pointer, at
  /// each call (ncclScalarDevice).
  Result<RedOp> create(const void* scalar, DataType type, bool scalarByPointer);
  Status destroy(RedOp op);
  /// The operator of a call as the kernels take it (built-in, or a live premulsum op made for
  /// `type`) on a communicator of `nranks`.
  Result<OpSpec> spec(DataType type, RedOp op, int nranks) const;
  /// The same for the host's loops, a scalar given by pointer read now.
  Result<kernels::HostOp> hostOp(DataType type, RedOp op, int nranks) const;

 private:
  /// A premulsum operator made by ncclRedOpCreatePreMulSum.
  struct UserOp {
    DataType type = DataType::kFloat32;
    bool byPointer = false;                  ///< read the scalar at each call (ncclScalarDevice)
    const void* pointer = nullptr;           ///< where, when byPointer
    alignas(8) unsigned char value[8] = {};  ///< the scalar, when given by value
  };
  /// By index (RedOp value - kFirstUserOp); empty slots are destroyed ops.
  std::vector<std::optional<UserOp>> ops_;
  /// The last built-in operator hostOp made, which depends on nothing but its key: a training
  /// step repeats the same few, and finding the loops again costs more than a tiny call's
  /// reduction.
  struct LastBuiltIn {
    DataType type = DataType::kFloat32;
    RedOp op = RedOp::kSum;
    int nranks = 0;  ///< 0: none yet
    kernels::HostOp hostOp;
  };
  mutable LastBuiltIn last_;
};

}  // namespace braid::comm
