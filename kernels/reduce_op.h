// Reduction functors shared by the host and CUDA executors.
//
// One definition of each operator's arithmetic, compiled for both sides, so
// the CPU tests check exactly what the GPU computes. NCCL's operators split
// into three parts, and so do these functors:
//
//   pre   applied to this rank's own input as it enters the reduction
//         (premulsum: x -> scalar * x; otherwise the identity)
//   op    the binary reduction: sum, prod, max, min
//   post  applied once to the final result (avg: x -> x / nranks)
//
// Arithmetic follows NCCL: integers wrap; float and double compute in their
// own type; float16, bfloat16 and fp8 compute in float and round back to the
// element type once per application of a functor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/float_types.h"
#include "kernels/host_device.h"

namespace braid::kernels {

/// What an operator needs beyond (type, op): premulsum's scalar, avg's rank count.
struct OpArgs {
  /// premulsum's scalar, in the element type's representation.
  alignas(8) unsigned char scalar[8] = {};
  /// avg's divisor: the number of ranks.
  int nranks = 1;

  /// Copies a premulsum scalar of `bytes` (the element size, at most 8) into `scalar`.
  void setScalar(const void* value, size_t bytes) {
    memcpy(scalar, value, bytes < sizeof scalar ? bytes : sizeof scalar);
  }
};

/// Integer arithmetic wraps on overflow, as NCCL's does: it is done on the
/// unsigned type of the same width, where wrapping is defined.
template <typename T, bool = std::is_integral<T>::value>
struct WrapType {
  using type = T;
};
template <typename T>
struct WrapType<T, true> {
  using type = std::make_unsigned_t<T>;
};

template <typename T>
struct FuncSum {
  BRAID_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (kIsNarrowFloat<T>) {
      return T::fromFloat(addRn(a.toFloat(), b.toFloat()));
    } else if constexpr (std::is_floating_point<T>::value) {
      return addRn(a, b);
    } else {
      using W = typename WrapType<T>::type;
      return static_cast<T>(static_cast<W>(static_cast<W>(a) + static_cast<W>(b)));
    }
  }
};

template <typename T>
struct FuncProd {
  BRAID_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (kIsNarrowFloat<T>) {
      return T::fromFloat(mulRn(a.toFloat(), b.toFloat()));
    } else if constexpr (std::is_floating_point<T>::value) {
      return mulRn(a, b);
    } else {
      using W = typename WrapType<T>::type;
      return static_cast<T>(static_cast<W>(static_cast<W>(a) * static_cast<W>(b)));
    }
  }
};

/// max(a, b) = a < b ? b : a: with a NaN operand the result is `a`.
template <typename T>
struct FuncMax {
  BRAID_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (kIsNarrowFloat<T>) {
      const float x = a.toFloat(), y = b.toFloat();
      return T::fromFloat(x < y ? y : x);
    } else {
      return a < b ? b : a;
    }
  }
};

/// min(a, b) = b < a ? b : a: with a NaN operand the result is `a`.
template <typename T>
struct FuncMin {
  BRAID_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (kIsNarrowFloat<T>) {
      const float x = a.toFloat(), y = b.toFloat();
      return T::fromFloat(y < x ? y : x);
    } else {
      return b < a ? b : a;
    }
  }
};

/// The pre and post of operators that have none. kIdentity lets the tables
/// leave out the load and finish passes instead of running a copy.
template <typename T>
struct FuncIdentity {
  static constexpr bool kIdentity = true;
  BRAID_HOST_DEVICE explicit FuncIdentity(const OpArgs&) {}
  BRAID_HOST_DEVICE T operator()(T x) const { return x; }
};

/// premulsum's pre: x -> scalar * x, the product rounded to T (FuncProd's
/// arithmetic, so integers wrap).
template <typename T>
struct FuncPreMul {
  static constexpr bool kIdentity = false;
  T scalar;
  BRAID_HOST_DEVICE explicit FuncPreMul(const OpArgs& args) {
    memcpy(&scalar, args.scalar, sizeof(T));
  }
  BRAID_HOST_DEVICE T operator()(T x) const { return FuncProd<T>()(scalar, x); }
};

/// avg's post: x -> x / nranks. Integers divide truncating toward zero (in a
/// 64-bit type, so a rank count beyond the element type's range is fine);
/// floats divide in float (double for double) and round to T.
template <typename T>
struct FuncDiv {
  static constexpr bool kIdentity = false;
  int nranks;
  BRAID_HOST_DEVICE explicit FuncDiv(const OpArgs& args) : nranks(args.nranks) {}
  BRAID_HOST_DEVICE T operator()(T x) const {
    if constexpr (kIsNarrowFloat<T>) {
      return T::fromFloat(divRn(x.toFloat(), static_cast<float>(nranks)));
    } else if constexpr (std::is_floating_point<T>::value) {
      return divRn(x, static_cast<T>(nranks));
    } else if constexpr (std::is_signed<T>::value) {
      return static_cast<T>(static_cast<int64_t>(x) / static_cast<int64_t>(nranks));
    } else {
      return static_cast<T>(static_cast<uint64_t>(x) / static_cast<uint64_t>(nranks));
    }
  }
};

}  // namespace braid::kernels
