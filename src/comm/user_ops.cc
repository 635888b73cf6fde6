// UserOps (user_ops.h): premulsum operators by handle, and the operator of a call as the host
// and device loops apply it.
#include "comm/user_ops.h"

#include <cstring>
#include <string>

namespace braid::comm {

Result<RedOp> UserOps::create(const void* scalar, DataType type, bool scalarByPointer) {
  if (scalar == nullptr) return invalidArgument("scalar is NULL");
  UserOp u;
  u.type = type;
  u.byPointer = scalarByPointer;
  u.pointer = scalar;
  if (!scalarByPointer) memcpy(u.value, scalar, dataTypeSize(type));
  size_t index = 0;
  while (index < ops_.size() && ops_[index]) ++index;
  if (index == ops_.size()) ops_.emplace_back();
  ops_[index] = u;
  return static_cast<RedOp>(kFirstUserOp + static_cast<int>(index));
}

Status UserOps::destroy(RedOp op) {
  int o = static_cast<int>(op);
  size_t index = static_cast<size_t>(o - kFirstUserOp);
  if (o < kFirstUserOp || index >= ops_.size() || !ops_[index]) {
    // Name the op as the caller knows it: NCCL's handles start at ncclNumOps.
    return invalidArgument("op " + std::to_string(o - kFirstUserOp + kNumRedOps) +
                           " is not a live ncclRedOpCreatePreMulSum op of this communicator");
  }
  ops_[index].reset();
  return Status::success();
}

Result<OpSpec> UserOps::spec(DataType type, RedOp op, int nranks) const {
  OpSpec spec;
  spec.args.nranks = nranks;
  int o = static_cast<int>(op);
  if (o >= kFirstUserOp) {
    size_t index = static_cast<size_t>(o - kFirstUserOp);
    if (index >= ops_.size() || !ops_[index]) {
      return invalidArgument("reduction op " + std::to_string(o - kFirstUserOp + kNumRedOps) +
                             " is not a live ncclRedOpCreatePreMulSum op of this communicator");
    }
    const UserOp& u = *ops_[index];
    if (u.type != type) {
      return invalidArgument(std::string("premulsum op was made for ") + dataTypeName(u.type) +
                             " but is used with " + dataTypeName(type));
    }
    spec.functor = RedOp::kPreMulSum;
    if (u.byPointer) {
      spec.scalarPointer = u.pointer;
    } else {
      memcpy(spec.args.scalar, u.value, dataTypeSize(type));
    }
    return spec;
  }
  if (o < 0 || o >= kNumRedOps) return invalidArgument("unknown reduction op " + std::to_string(o));
  spec.functor = op;
  return spec;
}

Result<kernels::HostOp> UserOps::hostOp(DataType type, RedOp op, int nranks) const {
  if (last_.nranks == nranks && last_.type == type && last_.op == op) return last_.hostOp;
  BRAID_ASSIGN_OR_RETURN(OpSpec s, spec(type, op, nranks));
  // A premulsum's scalar may change from call to call (by pointer), and its handle may be
  // destroyed and made again: only built-in operators are kept.
  if (static_cast<int>(op) < kFirstUserOp) {
    BRAID_ASSIGN_OR_RETURN(kernels::HostOp made, kernels::hostOp(type, s.functor, s.args));
    last_ = LastBuiltIn{type, op, nranks, made};
    return made;
  }
  // A scalar given by pointer is read when the collective runs, as NCCL
  // reads a device scalar when the kernel runs.
  if (s.scalarPointer != nullptr) memcpy(s.args.scalar, s.scalarPointer, dataTypeSize(type));
  return kernels::hostOp(type, s.functor, s.args);
}

}  // namespace braid::comm
