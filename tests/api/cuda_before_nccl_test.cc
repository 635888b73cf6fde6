// cuda_before_nccl_test.cc: the usual order, CUDA runtime first and nccl.h second.
//
// Most programs include cuda_runtime.h before nccl.h; the header must then use CUDA's own
// cudaStream_t rather than declare one. This file compiles that sequence wherever CUDA headers
// exist (tests/CMakeLists.txt adds them to its include path), and its test skips elsewhere.
// clang-format off: the order of these includes is what this file tests.
#if defined(__has_include)
#if __has_include(<cuda_runtime.h>)
#include <cuda_runtime.h>
#define BRAID_TEST_HAVE_CUDA_HEADERS 1
#endif
#endif

#include "nccl.h"
// clang-format on

#include <gtest/gtest.h>

#include <type_traits>

namespace {

static_assert(std::is_same_v<cudaStream_t, CUstream_st*>);

TEST(NcclHeaderCudaTest, NcclHeaderMayFollowCudaRuntime) {
#if defined(BRAID_TEST_HAVE_CUDA_HEADERS)
  static_assert(std::is_same_v<decltype(cudaStreamCreate(nullptr)), cudaError_t>);
  SUCCEED();
#else
  GTEST_SKIP() << "no CUDA headers on this machine";
#endif
}

}  // namespace
