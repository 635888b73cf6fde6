/*
 * abi_facts.h: the list of ABI facts that braid's nccl.h must share with NVIDIA's.
 *
 * braid's header is NCCL 2.32.3's API; the header installed here to compare with is NVIDIA's
 * 2.28.9. 2.29 to 2.32 only add to 2.28 (a result code, config fields at the end, new types,
 * functions), so the list holds what the releases share, which is what a program built against
 * either relies on; what they changed (the version, ncclNumResults, the config's size) is
 * checked against 2.32.3's values in abi_test.cc.
 *
 * The two headers declare the same names, so no translation unit can include both. Instead each
 * fact is written once here as an expression over the nccl.h names, and every translation unit
 * that includes *some* nccl.h (ours in C++, ours in C, NVIDIA's in upstream_abi_facts.cc)
 * evaluates the whole list with BRAID_ABI_DEFINE_NUMBER_FILLER. The tests then compare the
 * resulting arrays entry by entry, and report a mismatch by the fact's name.
 *
 * This file includes no nccl.h itself and is valid C99 as well as C++.
 */
#ifndef BRAID_TESTS_API_ABI_FACTS_H_
#define BRAID_TESTS_API_ABI_FACTS_H_

#include <stddef.h>

/* Offset and size of one member of a struct type. */
#define BRAID_ABI_MEMBER(X, type, member)             \
  X(type##_offsetof_##member, offsetof(type, member)) \
  X(type##_sizeof_##member, sizeof(((type*)0)->member))

/* Every numeric fact: X(name, expression). The expressions may use `config` and `simInfo`,
 * locals initialized with NCCL_CONFIG_INITIALIZER and NCCL_SIM_INFO_INITIALIZER. Pointer-valued
 * initializer fields are compared by their null-ness. */
#define BRAID_ABI_NUMBERS(X)                                                             \
  /* version */                                                                          \
  X(NCCL_MAJOR, NCCL_MAJOR)                                                              \
  X(NCCL_VERSION_2_8_4, NCCL_VERSION(2, 8, 4))                                           \
  X(NCCL_VERSION_2_9_6, NCCL_VERSION(2, 9, 6))                                           \
  X(NCCL_VERSION_2_28_9, NCCL_VERSION(2, 28, 9))                                         \
  X(NCCL_VERSION_3_0_0, NCCL_VERSION(3, 0, 0))                                           \
  /* handles and identifiers */                                                          \
  X(sizeof_ncclComm_t, sizeof(ncclComm_t))                                               \
  X(sizeof_ncclWindow_t, sizeof(ncclWindow_t))                                           \
  X(sizeof_cudaStream_t, sizeof(cudaStream_t))                                           \
  X(NCCL_COMM_NULL_is_null, (const void*)NCCL_COMM_NULL == (const void*)0)               \
  X(NCCL_UNIQUE_ID_BYTES, NCCL_UNIQUE_ID_BYTES)                                          \
  X(sizeof_ncclUniqueId, sizeof(ncclUniqueId))                                           \
  X(alignof_ncclUniqueId, __alignof__(ncclUniqueId))                                     \
  X(sizeof_ncclUniqueId_internal, sizeof(((ncclUniqueId*)0)->internal))                  \
  /* results */                                                                          \
  X(sizeof_ncclResult_t, sizeof(ncclResult_t))                                           \
  X(ncclSuccess, ncclSuccess)                                                            \
  X(ncclUnhandledCudaError, ncclUnhandledCudaError)                                      \
  X(ncclSystemError, ncclSystemError)                                                    \
  X(ncclInternalError, ncclInternalError)                                                \
  X(ncclInvalidArgument, ncclInvalidArgument)                                            \
  X(ncclInvalidUsage, ncclInvalidUsage)                                                  \
  X(ncclRemoteError, ncclRemoteError)                                                    \
  X(ncclInProgress, ncclInProgress)                                                      \
  /* constants */                                                                        \
  X(NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT)                                        \
  X(NCCL_CONFIG_UNDEF_PTR_is_null, (const void*)NCCL_CONFIG_UNDEF_PTR == (const void*)0) \
  X(NCCL_SPLIT_NOCOLOR, NCCL_SPLIT_NOCOLOR)                                              \
  X(NCCL_UNDEF_FLOAT_x1000, (long long)(NCCL_UNDEF_FLOAT * 1000.0f))                     \
  X(sizeof_NCCL_UNDEF_FLOAT, sizeof(NCCL_UNDEF_FLOAT))                                   \
  X(NCCL_WIN_DEFAULT, NCCL_WIN_DEFAULT)                                                  \
  X(NCCL_WIN_COLL_SYMMETRIC, NCCL_WIN_COLL_SYMMETRIC)                                    \
  X(NCCL_WIN_REQUIRED_ALIGNMENT, NCCL_WIN_REQUIRED_ALIGNMENT)                            \
  X(NCCL_CTA_POLICY_DEFAULT, NCCL_CTA_POLICY_DEFAULT)                                    \
  X(NCCL_CTA_POLICY_EFFICIENCY, NCCL_CTA_POLICY_EFFICIENCY)                              \
  X(NCCL_CTA_POLICY_ZERO, NCCL_CTA_POLICY_ZERO)                                          \
  X(NCCL_SHRINK_DEFAULT, NCCL_SHRINK_DEFAULT)                                            \
  X(NCCL_SHRINK_ABORT, NCCL_SHRINK_ABORT)                                                \
  X(NCCL_REVOKE_DEFAULT, NCCL_REVOKE_DEFAULT)                                            \
  /* ncclConfig_t layout */                                                              \
  X(alignof_ncclConfig_t, __alignof__(ncclConfig_t))                                     \
  BRAID_ABI_MEMBER(X, ncclConfig_t, size)                                                \
  BRAID_ABI_MEMBER(X, ncclConfig_t, magic)                                               \
  BRAID_ABI_MEMBER(X, ncclConfig_t, version)                                             \
  BRAID_ABI_MEMBER(X, ncclConfig_t, blocking)                                            \
  BRAID_ABI_MEMBER(X, ncclConfig_t, cgaClusterSize)                                      \
  BRAID_ABI_MEMBER(X, ncclConfig_t, minCTAs)                                             \
  BRAID_ABI_MEMBER(X, ncclConfig_t, maxCTAs)                                             \
  BRAID_ABI_MEMBER(X, ncclConfig_t, netName)                                             \
  BRAID_ABI_MEMBER(X, ncclConfig_t, splitShare)                                          \
  BRAID_ABI_MEMBER(X, ncclConfig_t, trafficClass)                                        \
  BRAID_ABI_MEMBER(X, ncclConfig_t, commName)                                            \
  BRAID_ABI_MEMBER(X, ncclConfig_t, collnetEnable)                                       \
  BRAID_ABI_MEMBER(X, ncclConfig_t, CTAPolicy)                                           \
  BRAID_ABI_MEMBER(X, ncclConfig_t, shrinkShare)                                         \
  BRAID_ABI_MEMBER(X, ncclConfig_t, nvlsCTAs)                                            \
  BRAID_ABI_MEMBER(X, ncclConfig_t, nChannelsPerNetPeer)                                 \
  BRAID_ABI_MEMBER(X, ncclConfig_t, nvlinkCentricSched)                                  \
  /* NCCL_CONFIG_INITIALIZER */                                                          \
  X(config_magic, config.magic)                                                          \
  X(config_blocking, config.blocking)                                                    \
  X(config_cgaClusterSize, config.cgaClusterSize)                                        \
  X(config_minCTAs, config.minCTAs)                                                      \
  X(config_maxCTAs, config.maxCTAs)                                                      \
  X(config_netName_is_null, config.netName == NULL)                                      \
  X(config_splitShare, config.splitShare)                                                \
  X(config_trafficClass, config.trafficClass)                                            \
  X(config_commName_is_null, config.commName == NULL)                                    \
  X(config_collnetEnable, config.collnetEnable)                                          \
  X(config_CTAPolicy, config.CTAPolicy)                                                  \
  X(config_shrinkShare, config.shrinkShare)                                              \
  X(config_nvlsCTAs, config.nvlsCTAs)                                                    \
  X(config_nChannelsPerNetPeer, config.nChannelsPerNetPeer)                              \
  X(config_nvlinkCentricSched, config.nvlinkCentricSched)                                \
  /* ncclSimInfo_t layout and NCCL_SIM_INFO_INITIALIZER */                               \
  X(sizeof_ncclSimInfo_t, sizeof(ncclSimInfo_t))                                         \
  X(alignof_ncclSimInfo_t, __alignof__(ncclSimInfo_t))                                   \
  X(sizeof_struct_ncclSimInfo_v22200, sizeof(struct ncclSimInfo_v22200))                 \
  BRAID_ABI_MEMBER(X, ncclSimInfo_t, size)                                               \
  BRAID_ABI_MEMBER(X, ncclSimInfo_t, magic)                                              \
  BRAID_ABI_MEMBER(X, ncclSimInfo_t, version)                                            \
  BRAID_ABI_MEMBER(X, ncclSimInfo_t, estimatedTime)                                      \
  X(simInfo_size, simInfo.size)                                                          \
  X(simInfo_magic, simInfo.magic)                                                        \
  X(simInfo_estimatedTime_x1000, (long long)(simInfo.estimatedTime * 1000.0f))           \
  /* reduction operators */                                                              \
  X(sizeof_ncclRedOp_t, sizeof(ncclRedOp_t))                                             \
  X(ncclSum, ncclSum)                                                                    \
  X(ncclProd, ncclProd)                                                                  \
  X(ncclMax, ncclMax)                                                                    \
  X(ncclMin, ncclMin)                                                                    \
  X(ncclAvg, ncclAvg)                                                                    \
  X(ncclNumOps, ncclNumOps)                                                              \
  X(ncclMaxRedOp, ncclMaxRedOp)                                                          \
  /* element types */                                                                    \
  X(sizeof_ncclDataType_t, sizeof(ncclDataType_t))                                       \
  X(ncclInt8, ncclInt8)                                                                  \
  X(ncclChar, ncclChar)                                                                  \
  X(ncclUint8, ncclUint8)                                                                \
  X(ncclInt32, ncclInt32)                                                                \
  X(ncclInt, ncclInt)                                                                    \
  X(ncclUint32, ncclUint32)                                                              \
  X(ncclInt64, ncclInt64)                                                                \
  X(ncclUint64, ncclUint64)                                                              \
  X(ncclFloat16, ncclFloat16)                                                            \
  X(ncclHalf, ncclHalf)                                                                  \
  X(ncclFloat32, ncclFloat32)                                                            \
  X(ncclFloat, ncclFloat)                                                                \
  X(ncclFloat64, ncclFloat64)                                                            \
  X(ncclDouble, ncclDouble)                                                              \
  X(ncclBfloat16, ncclBfloat16)                                                          \
  X(ncclFloat8e4m3, ncclFloat8e4m3)                                                      \
  X(ncclFloat8e5m2, ncclFloat8e5m2)                                                      \
  X(ncclNumTypes, ncclNumTypes)                                                          \
  /* scalar residence */                                                                 \
  X(sizeof_ncclScalarResidence_t, sizeof(ncclScalarResidence_t))                         \
  X(ncclScalarDevice, ncclScalarDevice)                                                  \
  X(ncclScalarHostImmediate, ncclScalarHostImmediate)

#define BRAID_ABI_COUNT_ONE(id, expr) +1
/** Number of entries of BRAID_ABI_NUMBERS. */
enum { kBraidAbiNumberCount = 0 BRAID_ABI_NUMBERS(BRAID_ABI_COUNT_ONE) };

/** Defines `void function(long long* out)` that stores every fact of BRAID_ABI_NUMBERS, in list
 *  order, as seen through the nccl.h included before the macro is used. */
#define BRAID_ABI_STORE_ONE(id, expr) out[index++] = (long long)(expr);
#define BRAID_ABI_DEFINE_NUMBER_FILLER(function)       \
  void function(long long* out) {                      \
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;     \
    ncclSimInfo_t simInfo = NCCL_SIM_INFO_INITIALIZER; \
    int index = 0;                                     \
    BRAID_ABI_NUMBERS(BRAID_ABI_STORE_ONE)             \
    (void)index;                                       \
  }

/* Every function of the API by its plain name; each also has a `p`-prefixed twin. The C++
 * tests compare their types (via typeid) with NVIDIA's and look them up in libnccl.so.2. */
#define BRAID_NCCL_FUNCTIONS(F) \
  F(ncclMemAlloc)               \
  F(ncclMemFree)                \
  F(ncclGetVersion)             \
  F(ncclGetUniqueId)            \
  F(ncclCommInitRankConfig)     \
  F(ncclCommInitRank)           \
  F(ncclCommInitAll)            \
  F(ncclCommFinalize)           \
  F(ncclCommDestroy)            \
  F(ncclCommAbort)              \
  F(ncclCommRevoke)             \
  F(ncclCommSplit)              \
  F(ncclCommShrink)             \
  F(ncclCommInitRankScalable)   \
  F(ncclGetErrorString)         \
  F(ncclGetLastError)           \
  F(ncclResetDebugInit)         \
  F(ncclCommGetAsyncError)      \
  F(ncclCommCount)              \
  F(ncclCommCuDevice)           \
  F(ncclCommUserRank)           \
  F(ncclCommRegister)           \
  F(ncclCommDeregister)         \
  F(ncclCommWindowRegister)     \
  F(ncclCommWindowDeregister)   \
  F(ncclRedOpCreatePreMulSum)   \
  F(ncclRedOpDestroy)           \
  F(ncclReduce)                 \
  F(ncclBcast)                  \
  F(ncclBroadcast)              \
  F(ncclAllReduce)              \
  F(ncclReduceScatter)          \
  F(ncclAllGather)              \
  F(ncclAlltoAll)               \
  F(ncclGather)                 \
  F(ncclScatter)                \
  F(ncclSend)                   \
  F(ncclRecv)                   \
  F(ncclGroupStart)             \
  F(ncclGroupEnd)               \
  F(ncclGroupSimulateEnd)

#ifdef __cplusplus
#include <string>
#include <typeinfo>
#include <vector>

namespace braid::test {

/** Names of the facts of BRAID_ABI_NUMBERS, in list order. */
inline std::vector<std::string> abiNumberNames() {
#define BRAID_ABI_NAME_ONE(id, expr) #id,
  return {BRAID_ABI_NUMBERS(BRAID_ABI_NAME_ONE)};
#undef BRAID_ABI_NAME_ONE
}

/** A function of the API and its type as typeid spells it (mangled): the return and parameter
 *  types, with typedef'd anonymous structs and enums named by their typedef. */
struct FunctionType {
  std::string name;
  std::string type;
};

/** Everything one nccl.h says about the ABI. */
struct AbiFacts {
  std::vector<long long> numbers;
  std::vector<FunctionType> functions;
  std::string suffix;  // NCCL_SUFFIX
};

}  // namespace braid::test

/** Defines `braid::test::AbiFacts function()`, local to the file, from the nccl.h included
 *  before it. Naming the functions inside typeid does not use them, so nothing is linked. */
#define BRAID_ABI_FUNCTION_TYPE_ONE(fn)                \
  facts.functions.push_back({#fn, typeid(fn).name()}); \
  facts.functions.push_back({"p" #fn, typeid(p##fn).name()});
#define BRAID_ABI_DEFINE_FACTS_GETTER(function)                      \
  namespace {                                                        \
  BRAID_ABI_DEFINE_NUMBER_FILLER(function##Numbers)                  \
  braid::test::AbiFacts function() {                                 \
    braid::test::AbiFacts facts;                                     \
    facts.numbers.resize(kBraidAbiNumberCount);                      \
    function##Numbers(facts.numbers.data());                         \
    _Pragma("GCC diagnostic push");                                  \
    _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\""); \
    BRAID_NCCL_FUNCTIONS(BRAID_ABI_FUNCTION_TYPE_ONE)                \
    _Pragma("GCC diagnostic pop");                                   \
    facts.suffix = NCCL_SUFFIX;                                      \
    return facts;                                                    \
  }                                                                  \
  }

/** NVIDIA's facts (upstream_abi_facts.cc); false when its nccl.h 2.28.9 is not installed. */
bool braidUpstreamAbiFacts(braid::test::AbiFacts* facts);
#endif /* __cplusplus */

/* Facts as seen from C (c_compile_check.c). */
#ifdef __cplusplus
extern "C" {
#endif
void braidCAbiNumbers(long long* out);
#ifdef __cplusplus
}
#endif

#endif /* BRAID_TESTS_API_ABI_FACTS_H_ */
