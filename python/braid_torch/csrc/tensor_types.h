// How torch's tensors and reduce operators become braid's (NCCL's) datatypes and operators, and
// the checks a tensor passes before braid touches its memory.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include "nccl.h"

namespace braid_torch {

/// NCCL's datatype for the tensor's element type. bool travels as uint8 (1 byte, 0 or 1).
/// Throws (c10::Error, a RuntimeError in Python) for types NCCL has none for: complex, quantized.
ncclDataType_t datatypeOf(const at::Tensor& tensor);

/// The checks every tensor braid reads or writes passes: a dense, contiguous CPU tensor. `what`
/// names it in the error ("all_reduce's tensor").
void checkTensor(const at::Tensor& tensor, const std::string& what);

/// checkTensor for each, and one element type and element count for all of them.
void checkSameShape(const std::vector<at::Tensor>& tensors, const at::Tensor& like,
                    const std::string& what);

/// The one tensor of a list that must hold exactly one (braid has one buffer per rank, as NCCL
/// has one per GPU).
const at::Tensor& onlyTensor(const std::vector<at::Tensor>& tensors, const std::string& what);

/// A reduce operator as braid runs it.
struct Reduction {
  enum class Kind {
    kNccl,     // one of NCCL's operators (`op`), over the wire
    kBitwise,  // BAND, BOR, BXOR: NCCL has none; gathered, then folded with torch's own operator
  };
  Kind kind = Kind::kNccl;
  ncclRedOp_t op = ncclSum;
  c10d::ReduceOp::RedOpType torchOp = c10d::ReduceOp::SUM;
  at::Tensor premulFactor;  // PREMUL_SUM: the factor, a scalar of the tensors' type
};

/// braid's form of `op` for tensors of `tensor`'s type. Throws for combinations torch's other
/// backends refuse too: AVG of bool, bitwise operators on floating-point tensors. Touches no
/// communicator, so the caller's thread checks its arguments while the queue runs others.
Reduction reductionFor(const c10d::ReduceOp& op, const at::Tensor& tensor);

/// The operator to pass to braid for one call on `comm` (on the queue's thread): PREMUL_SUM's
/// is created on the communicator for the call, and ScopedOp destroys it after.
class ScopedOp {
 public:
  ScopedOp(const Reduction& reduction, ncclDataType_t datatype, ncclComm_t comm);
  ~ScopedOp();
  ScopedOp(const ScopedOp&) = delete;
  ScopedOp& operator=(const ScopedOp&) = delete;
  ncclRedOp_t get() const { return op_; }

 private:
  ncclRedOp_t op_;
  ncclComm_t comm_;
  bool created_ = false;
};

/// Folds `gathered` (size() rows, one per rank, each shaped like the result) with a bitwise
/// operator, in rank order.
at::Tensor foldBitwise(const at::Tensor& gathered, c10d::ReduceOp::RedOpType op);

}  // namespace braid_torch
