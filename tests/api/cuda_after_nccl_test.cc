// cuda_after_nccl_test.cc: nccl.h's own cudaStream_t must coexist with CUDA's.
//
// On a machine without CUDA headers (or with BRAID_NCCL_H_NO_CUDA) nccl.h declares cudaStream_t
// itself. A program may still include the CUDA runtime afterwards, from a path nccl.h could not
// see; CUDA then repeats the typedef, which C++ accepts only if both name the same type. This file
// compiles that exact sequence wherever CUDA headers exist (tests/CMakeLists.txt adds them to its
// include path), and its test skips elsewhere.
#define BRAID_NCCL_H_NO_CUDA 1
#include "nccl.h"

#if defined(__has_include)
#if __has_include(<cuda_runtime.h>)
#include <cuda_runtime.h>
#define BRAID_TEST_HAVE_CUDA_HEADERS 1
#endif
#endif

#include <gtest/gtest.h>

#include <type_traits>

namespace {

static_assert(std::is_same_v<cudaStream_t, CUstream_st*>);

TEST(NcclHeaderCudaTest, CudaRuntimeMayFollowTheFallbackStream) {
#if defined(BRAID_TEST_HAVE_CUDA_HEADERS)
  static_assert(CUDART_VERSION > 0);
  // A stream declared through either header is accepted by the other's API.
  cudaStream_t stream = nullptr;
  ncclResult_t (*allReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                            cudaStream_t) = &ncclAllReduce;
  EXPECT_NE(allReduce, nullptr);
  EXPECT_EQ(stream, nullptr);
#else
  GTEST_SKIP() << "no CUDA headers on this machine";
#endif
}

}  // namespace
