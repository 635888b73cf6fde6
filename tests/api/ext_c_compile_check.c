/*
 * ext_c_compile_check.c: proof that braid_ext.h, braid's extension header, is valid C99.
 *
 * Compiled with -std=c99 -Wall -Wextra -pedantic -Werror (tests/CMakeLists.txt) and linked into
 * the API tests, so that a C++ construct or a warning in the header breaks the build. The function
 * pointer types below spell out the documented signatures, so a declaration that drifts from them
 * fails to compile, and taking the addresses makes the link resolve them in libnccl.so.2.
 */
#define BRAID_NCCL_H_NO_CUDA 1
#include "braid_ext.h"

typedef ncclResult_t (*AllGatherVFn)(const void*, size_t, void*, const size_t*, const size_t*,
                                     ncclDataType_t, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*ReduceScatterVFn)(const void*, const size_t*, const size_t*, void*, size_t,
                                         ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*AlltoAllVFn)(const void*, const size_t*, const size_t*, void*, const size_t*,
                                    const size_t*, ncclDataType_t, ncclComm_t, cudaStream_t);

/* Returns how many of the three entry points the C view links to (3). */
int braidCExtEntryPoints(void);
int braidCExtEntryPoints(void) {
  AllGatherVFn allGatherV = &braidAllGatherV;
  ReduceScatterVFn reduceScatterV = &braidReduceScatterV;
  AlltoAllVFn alltoAllV = &braidAlltoAllV;
  return (allGatherV != NULL) + (reduceScatterV != NULL) + (alltoAllV != NULL);
}
