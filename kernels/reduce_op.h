// Reduction functors shared by the host and CUDA executors.
//
// One definition of each operator's arithmetic, compiled for both sides, so
// the CPU tests check exactly what the GPU computes. A functor takes two
// elements and returns one; the executors apply it elementwise.
//
// Today: sum, prod, max, min for the native integer and floating types.
// fp16, bf16 and fp8 (converted in registers) and avg / premulsum come with
// the full dtype x op matrix.
#pragma once

#if defined(__CUDACC__)
#define BRAID_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define BRAID_HOST_DEVICE inline
#endif

#include <type_traits>

namespace braid::kernels {

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
    using W = typename WrapType<T>::type;
    return static_cast<T>(static_cast<W>(static_cast<W>(a) + static_cast<W>(b)));
  }
};

template <typename T>
struct FuncProd {
  BRAID_HOST_DEVICE T operator()(T a, T b) const {
    using W = typename WrapType<T>::type;
    return static_cast<T>(static_cast<W>(static_cast<W>(a) * static_cast<W>(b)));
  }
};

template <typename T>
struct FuncMax {
  BRAID_HOST_DEVICE T operator()(T a, T b) const { return a < b ? b : a; }
};

template <typename T>
struct FuncMin {
  BRAID_HOST_DEVICE T operator()(T a, T b) const { return b < a ? b : a; }
};

}  // namespace braid::kernels
