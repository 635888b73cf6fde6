// Table-driven instantiation: the one switch from a runtime (datatype, op)
// pair to the C++ element type and functor, shared by the host loops and the
// CUDA kernels so both tables always cover the same pairs.
//
//   dispatchTypeAndOp(type, op, missing, [](auto t, auto o) {
//     using T = typename decltype(t)::Type;                 // e.g. float
//     using F = typename decltype(o)::template Func<T>;     // e.g. FuncSum<float>
//     return &someLoop<T, F>;
//   });
//
// Pairs without an instantiation yet (fp16, bf16, fp8, avg) give `missing`.
#pragma once

#include <cstdint>

#include "braid/types.h"
#include "kernels/reduce_op.h"

namespace braid::kernels {

template <typename T>
struct TypeTag {
  using Type = T;
};

template <template <typename> class F>
struct OpTag {
  template <typename T>
  using Func = F<T>;
};

/// Calls visit(TypeTag<T>{}) for the element type of `type`.
template <typename R, typename Visit>
R dispatchType(DataType type, R missing, Visit&& visit) {
  switch (type) {
    case DataType::kInt8:
      return visit(TypeTag<int8_t>{});
    case DataType::kUint8:
      return visit(TypeTag<uint8_t>{});
    case DataType::kInt32:
      return visit(TypeTag<int32_t>{});
    case DataType::kUint32:
      return visit(TypeTag<uint32_t>{});
    case DataType::kInt64:
      return visit(TypeTag<int64_t>{});
    case DataType::kUint64:
      return visit(TypeTag<uint64_t>{});
    case DataType::kFloat32:
      return visit(TypeTag<float>{});
    case DataType::kFloat64:
      return visit(TypeTag<double>{});
    default:
      return missing;
  }
}

/// Calls visit(OpTag<Func>{}) for the functor of `op`.
template <typename R, typename Visit>
R dispatchOp(RedOp op, R missing, Visit&& visit) {
  switch (op) {
    case RedOp::kSum:
      return visit(OpTag<FuncSum>{});
    case RedOp::kProd:
      return visit(OpTag<FuncProd>{});
    case RedOp::kMax:
      return visit(OpTag<FuncMax>{});
    case RedOp::kMin:
      return visit(OpTag<FuncMin>{});
    default:
      return missing;
  }
}

/// Calls visit(TypeTag<T>{}, OpTag<Func>{}) for the pair.
template <typename R, typename Visit>
R dispatchTypeAndOp(DataType type, RedOp op, R missing, Visit&& visit) {
  return dispatchType(type, missing, [&](auto t) {
    return dispatchOp(op, missing, [&](auto o) { return visit(t, o); });
  });
}

}  // namespace braid::kernels
