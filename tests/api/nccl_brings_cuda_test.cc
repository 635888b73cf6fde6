// nccl_brings_cuda_test.cc: nccl.h alone makes the CUDA runtime and fp16/bf16 types visible.
//
// NVIDIA's nccl.h includes cuda_runtime.h, cuda_fp16.h and cuda_bf16.h (and cuda_fp8.h in C++),
// and real code leans on that, e.g. by naming __half after including only nccl.h. braid's header
// does the same whenever the CUDA headers can be found. This file includes nothing else, and is
// compiled with the CUDA headers on its include path where this machine has them; its test skips
// elsewhere.
#include <gtest/gtest.h>

#include "nccl.h"

#if defined(__has_include)
#if __has_include(<cuda_runtime.h>)
#define BRAID_TEST_HAVE_CUDA_HEADERS 1
#endif
#endif

namespace {

TEST(NcclHeaderCudaTest, NcclHeaderIncludesCudaHeaders) {
#if defined(BRAID_TEST_HAVE_CUDA_HEADERS)
  static_assert(CUDART_VERSION >= 11080);
  static_assert(sizeof(__half) == 2);
  static_assert(sizeof(__nv_bfloat16) == 2);
  static_assert(sizeof(__nv_fp8_e4m3) == 1);
  static_assert(sizeof(cudaStream_t) == sizeof(void*));
  SUCCEED();
#else
  GTEST_SKIP() << "no CUDA headers on this machine";
#endif
}

}  // namespace
