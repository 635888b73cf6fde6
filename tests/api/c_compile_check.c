/*
 * c_compile_check.c: proof that braid's nccl.h is valid C99 and gives C the same ABI as C++.
 *
 * It is compiled with -std=c99 -Wall -Wextra -pedantic -Werror (tests/CMakeLists.txt), so any C++
 * construct or warning that creeps into nccl.h breaks the build. BRAID_NCCL_H_NO_CUDA selects the
 * header's own cudaStream_t fallback, the part of it that machines without CUDA rely on, and keeps
 * warnings from CUDA's headers out of this strict build. The facts it computes are compared with
 * the C++ view of the same header by abi_test.cc.
 */
#define BRAID_NCCL_H_NO_CUDA 1
#include "nccl.h"

#include "api/abi_facts.h"

/* Uses of the API the way a C program writes them: initializers, enums as values, function
 * pointers of the declared types. */
static ncclConfig_t makeConfig(void) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.commName = "c_compile_check";
  config.CTAPolicy = NCCL_CTA_POLICY_EFFICIENCY;
  return config;
}

typedef ncclResult_t (*AllReduceFn)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                                    ncclComm_t, cudaStream_t);

int braidCUsesApi(void);
int braidCUsesApi(void) {
  ncclConfig_t config = makeConfig();
  ncclSimInfo_t simInfo = NCCL_SIM_INFO_INITIALIZER;
  ncclUniqueId id;
  ncclComm_t comm = NCCL_COMM_NULL;
  cudaStream_t stream = NULL;
  ncclDataType_t type = ncclHalf;
  ncclRedOp_t op = ncclAvg;
  ncclScalarResidence_t residence = ncclScalarHostImmediate;
  ncclResult_t result = ncclInProgress;
  AllReduceFn allReduce = &ncclAllReduce;
  (void)allReduce;
  (void)comm;
  (void)stream;
  id.internal[0] = 0;
  return (int)config.blocking + (int)simInfo.version + id.internal[0] + (int)type + (int)op +
         (int)residence + (int)result;
}

BRAID_ABI_DEFINE_NUMBER_FILLER(braidCAbiNumbers)
