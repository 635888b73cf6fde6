#include "tensor_types.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

namespace braid_torch {

ncclDataType_t datatypeOf(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat:
      return ncclFloat32;
    case at::kDouble:
      return ncclFloat64;
    case at::kHalf:
      return ncclFloat16;
    case at::kBFloat16:
      return ncclBfloat16;
    case at::kChar:
      return ncclInt8;
    case at::kByte:
      return ncclUint8;
    case at::kBool:
      return ncclUint8;
    case at::kInt:
      return ncclInt32;
    case at::kLong:
      return ncclInt64;
    default:
      TORCH_CHECK(false, "braid: tensors of type ", tensor.scalar_type(),
                  " are not supported (NCCL has no such datatype)");
  }
}

void checkTensor(const at::Tensor& tensor, const std::string& what) {
  TORCH_CHECK(tensor.defined(), "braid: ", what, " is undefined");
  TORCH_CHECK(tensor.device().is_cpu(), "braid: ", what, " is on ", tensor.device(),
              "; the braid backend takes CPU tensors (for CUDA tensors use backend=\"nccl\" with "
              "braid's libnccl.so.2 in place of NVIDIA's)");
  TORCH_CHECK(tensor.layout() == at::kStrided, "braid: ", what, " must be dense, not ",
              tensor.layout());
  TORCH_CHECK(tensor.is_contiguous(), "braid: ", what, " must be contiguous");
  datatypeOf(tensor);
}

void checkSameShape(const std::vector<at::Tensor>& tensors, const at::Tensor& like,
                    const std::string& what) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string name = what + "[" + std::to_string(i) + "]";
    checkTensor(tensors[i], name);
    TORCH_CHECK(tensors[i].scalar_type() == like.scalar_type(), "braid: ", name, " is ",
                tensors[i].scalar_type(), " but the input is ", like.scalar_type());
    TORCH_CHECK(tensors[i].numel() == like.numel(), "braid: ", name, " has ", tensors[i].numel(),
                " elements but the input has ", like.numel());
  }
}

const at::Tensor& onlyTensor(const std::vector<at::Tensor>& tensors, const std::string& what) {
  TORCH_CHECK(tensors.size() == 1, "braid: ", what, " takes one tensor per rank, got ",
              tensors.size());
  return tensors[0];
}

namespace {

bool isFloating(const at::Tensor& t) { return at::isFloatingType(t.scalar_type()); }

Reduction nccl(ncclRedOp_t op, c10d::ReduceOp::RedOpType torchOp) {
  Reduction r;
  r.op = op;
  r.torchOp = torchOp;
  return r;
}

// A bool is 0 or 1 in a byte: sum saturates to "any" (max), product to "all" (min), as
// ProcessGroupNCCL maps them.
Reduction boolReduction(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM:
    case c10d::ReduceOp::MAX:
    case c10d::ReduceOp::BOR:
      return nccl(ncclMax, op);
    case c10d::ReduceOp::PRODUCT:
    case c10d::ReduceOp::MIN:
    case c10d::ReduceOp::BAND:
      return nccl(ncclMin, op);
    case c10d::ReduceOp::BXOR: {
      Reduction r = nccl(ncclSum, op);
      r.kind = Reduction::Kind::kBitwise;
      return r;
    }
    default:
      TORCH_CHECK(false, "braid: ReduceOp ", static_cast<int>(op),
                  " is not defined for bool tensors");
  }
}

}  // namespace

Reduction reductionFor(const c10d::ReduceOp& op, const at::Tensor& tensor) {
  if (tensor.scalar_type() == at::kBool) return boolReduction(op.op_);
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
      return nccl(ncclSum, op.op_);
    case c10d::ReduceOp::PRODUCT:
      return nccl(ncclProd, op.op_);
    case c10d::ReduceOp::MIN:
      return nccl(ncclMin, op.op_);
    case c10d::ReduceOp::MAX:
      return nccl(ncclMax, op.op_);
    case c10d::ReduceOp::AVG:
      return nccl(ncclAvg, op.op_);
    case c10d::ReduceOp::BAND:
    case c10d::ReduceOp::BOR:
    case c10d::ReduceOp::BXOR: {
      TORCH_CHECK(!isFloating(tensor),
                  "braid: bitwise ReduceOps need integer or bool tensors, not ",
                  tensor.scalar_type());
      Reduction r = nccl(ncclSum, op.op_);
      r.kind = Reduction::Kind::kBitwise;
      return r;
    }
    case c10d::ReduceOp::PREMUL_SUM: {
      TORCH_CHECK(op.supplement_.defined(), "braid: PREMUL_SUM without its factor");
      // Only torch.distributed._make_nccl_premul_sum makes PREMUL_SUM, always with this supplement.
      const auto* factor = static_cast<const c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
      Reduction r = nccl(ncclSum, op.op_);
      if (!factor->tensor_factors.empty()) {
        r.premulFactor =
            factor->tensor_factors.at(0).to(at::kCPU, tensor.scalar_type()).reshape({});
      } else {
        r.premulFactor = at::scalar_tensor(factor->double_factor, tensor.options());
      }
      return r;
    }
    default:
      TORCH_CHECK(false, "braid: unknown ReduceOp ", static_cast<int>(op.op_));
  }
}

ScopedOp::ScopedOp(const Reduction& reduction, ncclDataType_t datatype, ncclComm_t comm)
    : op_(reduction.op), comm_(comm) {
  if (!reduction.premulFactor.defined()) return;
  // ncclScalarHostImmediate: the factor is read now; the operator lives as long as this.
  const ncclResult_t result = ncclRedOpCreatePreMulSum(&op_, reduction.premulFactor.data_ptr(),
                                                       datatype, ncclScalarHostImmediate, comm);
  TORCH_CHECK(result == ncclSuccess, "braid: PREMUL_SUM: ", ncclGetLastError(comm));
  created_ = true;
}

ScopedOp::~ScopedOp() {
  if (created_) ncclRedOpDestroy(op_, comm_);
}

at::Tensor foldBitwise(const at::Tensor& gathered, c10d::ReduceOp::RedOpType op) {
  at::Tensor acc = gathered[0].clone();
  for (int64_t r = 1; r < gathered.size(0); ++r) {
    switch (op) {
      case c10d::ReduceOp::BAND:
        acc.bitwise_and_(gathered[r]);
        break;
      case c10d::ReduceOp::BOR:
        acc.bitwise_or_(gathered[r]);
        break;
      case c10d::ReduceOp::BXOR:
        acc.bitwise_xor_(gathered[r]);
        break;
      default:
        TORCH_CHECK(false, "braid: ReduceOp ", static_cast<int>(op), " is not bitwise");
    }
  }
  return acc;
}

}  // namespace braid_torch
