// Table-driven instantiation: the one switch from a runtime (datatype, op)
// pair to the C++ element type and functors, shared by the host loops and the
// CUDA kernels so both tables always cover the same pairs.
//
//   dispatchTypeAndOp(type, op, missing, [](auto t, auto o) {
//     using T = typename decltype(t)::Type;                  // e.g. Float16
//     using F = typename decltype(o)::template Func<T>;      // e.g. FuncSum<Float16>
//     using Pre = typename decltype(o)::template Pre<T>;     // e.g. FuncPreMul<Float16>
//     using Post = typename decltype(o)::template Post<T>;   // e.g. FuncIdentity<Float16>
//     return &someLoop<T, Pre, F>;
//   });
//
// Every operator is a (pre, op, post) triple (kernels/reduce_op.h): avg is
// sum with a division after, premulsum is sum with a multiplication before.
// Values outside the enums give `missing`.
#pragma once

#include <cstdint>

#include "braid/types.h"
#include "kernels/float_types.h"
#include "kernels/host_device.h"
#include "kernels/reduce_op.h"

// The dispatchers are called from host code with host lambdas and from the
// engine's device code with device lambdas; nvcc checks each instantiation
// where it is used, so the mixed qualifiers need its check disabled here.
#if defined(__CUDACC__)
#define BRAID_DISPATCH_NO_HD_CHECK _Pragma("nv_exec_check_disable")
#else
#define BRAID_DISPATCH_NO_HD_CHECK
#endif

namespace braid::kernels {

template <typename T>
struct TypeTag {
  using Type = T;
};

template <template <typename> class F, template <typename> class PreF = FuncIdentity,
          template <typename> class PostF = FuncIdentity>
struct OpTag {
  template <typename T>
  using Func = F<T>;
  template <typename T>
  using Pre = PreF<T>;
  template <typename T>
  using Post = PostF<T>;
};

/// Calls visit(TypeTag<T>{}) for the element type of `type`.
BRAID_DISPATCH_NO_HD_CHECK
template <typename R, typename Visit>
BRAID_HOST_DEVICE R dispatchType(DataType type, R missing, Visit&& visit) {
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
    case DataType::kFloat16:
      return visit(TypeTag<Float16>{});
    case DataType::kFloat32:
      return visit(TypeTag<float>{});
    case DataType::kFloat64:
      return visit(TypeTag<double>{});
    case DataType::kBfloat16:
      return visit(TypeTag<Bfloat16>{});
    case DataType::kFloat8e4m3:
      return visit(TypeTag<Float8e4m3>{});
    case DataType::kFloat8e5m2:
      return visit(TypeTag<Float8e5m2>{});
  }
  return missing;
}

/// Calls visit(OpTag<...>{}) for the functors of `op`.
BRAID_DISPATCH_NO_HD_CHECK
template <typename R, typename Visit>
BRAID_HOST_DEVICE R dispatchOp(RedOp op, R missing, Visit&& visit) {
  switch (op) {
    case RedOp::kSum:
      return visit(OpTag<FuncSum>{});
    case RedOp::kProd:
      return visit(OpTag<FuncProd>{});
    case RedOp::kMax:
      return visit(OpTag<FuncMax>{});
    case RedOp::kMin:
      return visit(OpTag<FuncMin>{});
    case RedOp::kAvg:
      return visit(OpTag<FuncSum, FuncIdentity, FuncDiv>{});
    case RedOp::kPreMulSum:
      return visit(OpTag<FuncSum, FuncPreMul>{});
  }
  return missing;
}

namespace detail {

// The two levels of dispatchTypeAndOp as function objects rather than
// lambdas, so that nvcc's host/device check can be disabled on each.
template <typename R, typename Visit, typename TypeTagT>
struct WithType {
  Visit& visit;
  TypeTagT type;
  BRAID_DISPATCH_NO_HD_CHECK
  template <typename OpTagT>
  BRAID_HOST_DEVICE R operator()(OpTagT op) const {
    return visit(type, op);
  }
};

template <typename R, typename Visit>
struct ThenOp {
  Visit& visit;
  RedOp op;
  R missing;
  BRAID_DISPATCH_NO_HD_CHECK
  template <typename TypeTagT>
  BRAID_HOST_DEVICE R operator()(TypeTagT type) const {
    return dispatchOp(op, missing, WithType<R, Visit, TypeTagT>{visit, type});
  }
};

}  // namespace detail

/// Calls visit(TypeTag<T>{}, OpTag<...>{}) for the pair.
BRAID_DISPATCH_NO_HD_CHECK
template <typename R, typename Visit>
BRAID_HOST_DEVICE R dispatchTypeAndOp(DataType type, RedOp op, R missing, Visit&& visit) {
  return dispatchType(type, missing, detail::ThenOp<R, Visit>{visit, op, missing});
}

}  // namespace braid::kernels
