// The tuner plugin ABI of NCCL 2.30.7, versions 2 to 6: what a `libnccl-tuner*.so` (or a network
// plugin's library, as aws-ofi-nccl's) exports as `ncclTunerPlugin_vN`, written here from the
// facts of NCCL's `src/include/plugin/nccl_tuner.h` and `plugin/tuner/tuner_vN.h` (names, values,
// field order). Plain C layouts: a plugin built against NCCL's headers reads and fills these.
//
// What changed between versions, the reason each table below exists:
//   v2   getCollInfo answers an algorithm and a protocol (NCCL's indices) and a channel count;
//        init(nRanks, nNodes, logger, &context); destroy.
//   v3   getCollInfo takes the cost table (float[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS],
//        microseconds, -1 = ignored) and may rewrite it: the cheapest entry left is chosen.
//   v4   getCollInfo takes regBuff (whether the user's buffers are registered).
//   v5   init(&context, commId, nRanks, nNodes, logger, nvlDomainInfo, constants); finalize in
//        place of destroy.
//   v6   getChunkSize (optional, may be null).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/plugin_log.h"
#include "nccl.h"

namespace braid::tunerabi {

// The logger every plugin ABI shares (base/plugin_log.h).
using plugins::NCCL_LOG_ABORT;
using plugins::NCCL_LOG_INFO;
using plugins::NCCL_LOG_NONE;
using plugins::NCCL_LOG_TRACE;
using plugins::NCCL_LOG_VERSION;
using plugins::NCCL_LOG_WARN;
using plugins::ncclDebugLogger_t;
using plugins::ncclDebugLogLevel;

/// ncclFunc_t (nccl_common.h): the collective getCollInfo is asked about.
enum ncclFunc_t {
  ncclFuncBroadcast = 0,
  ncclFuncReduce = 1,
  ncclFuncAllGather = 2,
  ncclFuncReduceScatter = 3,
  ncclFuncAllReduce = 4,
  ncclFuncSendRecv = 5,
  ncclFuncSend = 6,
  ncclFuncRecv = 7,
  ncclFuncAlltoAll = 8,
  ncclFuncScatter = 9,
  ncclFuncGather = 10,
  ncclFuncAllGatherV = 11,
  ncclFuncPutSignal = 12,
  ncclFuncSignal = 13,
  ncclFuncWaitSignal = 14,
  ncclNumFuncs = 15
};

// The cost table's rows (NCCL_ALGO_*) and columns (NCCL_PROTO_*).
inline constexpr int NCCL_ALGO_UNDEF = -1;
inline constexpr int NCCL_ALGO_TREE = 0;
inline constexpr int NCCL_ALGO_RING = 1;
inline constexpr int NCCL_ALGO_COLLNET_DIRECT = 2;
inline constexpr int NCCL_ALGO_COLLNET_CHAIN = 3;
inline constexpr int NCCL_ALGO_NVLS = 4;
inline constexpr int NCCL_ALGO_NVLS_TREE = 5;
inline constexpr int NCCL_ALGO_PAT = 6;
inline constexpr int NCCL_NUM_ALGORITHMS = 7;

inline constexpr int NCCL_PROTO_UNDEF = -1;
inline constexpr int NCCL_PROTO_LL = 0;
inline constexpr int NCCL_PROTO_LL128 = 1;
inline constexpr int NCCL_PROTO_SIMPLE = 2;
inline constexpr int NCCL_NUM_PROTOCOLS = 3;

/// A cost table entry NCCL (and braid) will not run.
inline constexpr float NCCL_ALGO_PROTO_IGNORE = -1.0f;

// The constants' other dimensions (NCCL_HW_*, NCCL_*_COMPCAP_IDX, NCCL_TUNING_SCALE_*).
inline constexpr int NCCL_HW_NVLINK = 0;
inline constexpr int NCCL_HW_PCI = 1;
inline constexpr int NCCL_HW_NET = 2;
inline constexpr int NCCL_NUM_HW_LINKS = 3;
inline constexpr int NCCL_NUM_COMPCAPS = 4;
inline constexpr int NCCL_NUM_TUNING_SCALES = 3;

/// v5 and v6: the NVLink domains of the communicator (NCCL: one per node).
typedef struct {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
} ncclNvlDomainInfo_v5_t;

/// v5 and v6: the figures NCCL's model starts from, which the plugin may change in init.
typedef struct {
  double baseLatencies[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  double hwLatencies[NCCL_NUM_HW_LINKS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  double llMaxBws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
  double perChMaxRingLL128Bws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
  double perChMaxTreeLL128Bws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
  double perChMaxTreeBws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
  double perChMaxNVLSTreeBws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
} ncclTunerConstants_v5_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int collNetSupport,
                              int nvlsSupport, int numPipeOps, int* algorithm, int* protocol,
                              int* nChannels);
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v2_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int* nChannels);
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v3_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff,
                              int* nChannels);
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v4_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t* nvlDomainInfo,
                       ncclTunerConstants_v5_t* constants);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff,
                              int* nChannels);
  ncclResult_t (*finalize)(void* context);
} ncclTuner_v5_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t* nvlDomainInfo,
                       ncclTunerConstants_v5_t* constants);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff,
                              int* nChannels);
  ncclResult_t (*finalize)(void* context);
  /// Optional (may be null): the plugin may change the chunk size NCCL computed.
  ncclResult_t (*getChunkSize)(void* context, ncclFunc_t collType, size_t nBytes, int algo,
                               int proto, int nChannels, size_t* chunkSize);
} ncclTuner_v6_t;

/// The symbols the loader probes, newest first.
inline constexpr struct {
  int version;
  const char* symbol;
} kTunerSymbols[] = {
    {6, "ncclTunerPlugin_v6"}, {5, "ncclTunerPlugin_v5"}, {4, "ncclTunerPlugin_v4"},
    {3, "ncclTunerPlugin_v3"}, {2, "ncclTunerPlugin_v2"},
};

}  // namespace braid::tunerabi
