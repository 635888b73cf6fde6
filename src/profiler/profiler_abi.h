// The profiler plugin ABI of NCCL 2.30.7, versions 1 to 6: what a `libnccl-profiler*.so` exports
// as `ncclProfiler_vN`, written here from the facts of NCCL's `src/include/plugin/nccl_profiler.h`
// and `plugin/profiler/profiler_vN.h` (names, values, field order). Plain C layouts: a plugin
// built against NCCL's headers reads these exactly.
//
// What changed between versions, the reason each descriptor below exists:
//   v1   coll and p2p carry the communicator's name and hash; func, datatype, algorithm and
//        protocol are numbers (ncclFunc_t, ncclDataType_t, NCCL_ALGO_*, NCCL_PROTO_*); coll has
//        the operator and its traffic bytes.
//   v2   func, datatype, algorithm and protocol become strings; the operator goes.
//   v3   the traffic bytes go; kernel channel and network plugin events appear.
//   v4   name and hash leave the events for init (which gains the communicator's name, hash,
//        nodes, ranks, rank and a logger); nMaxChannels becomes nChannels; the kernel channel
//        carries a GPU timer; proxy steps' state carries the bytes moved.
//   v5   the type is 64 bits; API events (group, collective, point-to-point API, kernel launch)
//        appear and become the collective's and point-to-point's parent; their group moves to
//        parentGroup; init takes the communicator id first.
//   v6   copy-engine collective events (ceColl, ceCollSync, ceCollBatch) join the union.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "base/plugin_log.h"
#include "nccl.h"

namespace braid::profabi {

/// The event types, as bits of the activation mask a plugin's init returns.
enum : uint64_t {
  kGroup = 1 << 0,
  kColl = 1 << 1,
  kP2p = 1 << 2,
  kProxyOp = 1 << 3,
  kProxyStep = 1 << 4,
  kProxyCtrl = 1 << 5,
  kKernelCh = 1 << 6,
  kNetPlugin = 1 << 7,
  kGroupApi = 1 << 8,
  kCollApi = 1 << 9,
  kP2pApi = 1 << 10,
  kKernelLaunch = 1 << 11,
  kCeColl = 1 << 12,
  kCeSync = 1 << 13,
  kCeBatch = 1 << 14,
};

/// ncclProfilerEventState_t: the states recordEventState reports (one enum for every version).
enum ncclProfilerEventState_t {
  ncclProfilerProxyOpSendPosted = 0,
  ncclProfilerProxyOpSendRemFifoWait = 1,
  ncclProfilerProxyOpSendTransmitted = 2,
  ncclProfilerProxyOpSendDone = 3,
  ncclProfilerProxyOpRecvPosted = 4,
  ncclProfilerProxyOpRecvReceived = 5,
  ncclProfilerProxyOpRecvTransmitted = 6,
  ncclProfilerProxyOpRecvDone = 7,
  ncclProfilerProxyOpInProgress_v4 = 19,
  ncclProfilerProxyStepSendGPUWait = 8,
  ncclProfilerProxyStepSendPeerWait_v4 = 20,
  ncclProfilerProxyStepSendWait = 9,
  ncclProfilerProxyStepRecvWait = 10,
  ncclProfilerProxyStepRecvFlushWait = 11,
  ncclProfilerProxyStepRecvGPUWait = 12,
  ncclProfilerProxyCtrlIdle = 13,
  ncclProfilerProxyCtrlActive = 14,
  ncclProfilerProxyCtrlSleep = 15,
  ncclProfilerProxyCtrlWakeup = 16,
  ncclProfilerProxyCtrlAppend = 17,
  ncclProfilerProxyCtrlAppendEnd = 18,
  ncclProfilerNetPluginUpdate = 21,
  ncclProfilerKernelChStop = 22,
  ncclProfilerGroupStartApiStop = 23,
  ncclProfilerGroupEndApiStart = 24,
  ncclProfilerCeCollStart = 25,
  ncclProfilerCeCollComplete = 26,
  ncclProfilerCeSyncStart = 27,
  ncclProfilerCeSyncComplete = 28,
  ncclProfilerCeBatchStart = 29,
  ncclProfilerCeBatchComplete = 30,
};

/// The logger v4 and later plugins are given (base/plugin_log.h).
using plugins::NCCL_LOG_ABORT;
using plugins::NCCL_LOG_INFO;
using plugins::NCCL_LOG_NONE;
using plugins::NCCL_LOG_TRACE;
using plugins::NCCL_LOG_VERSION;
using plugins::NCCL_LOG_WARN;
using plugins::ncclDebugLogger_t;
using plugins::ncclDebugLogLevel;

// The proxy and network plugin parts, the same from v1 (or v3) on.
struct ProxyOpDescr {
  pid_t pid;
  uint8_t channelId;
  int peer;
  int nSteps;
  int chunkSize;
  int isSend;
};
struct ProxyStepDescr {
  int step;
};
struct NetPluginDescr {
  int64_t id;
  void* data;
};

/// v2's and v3's point-to-point part.
struct P2pDescrV2 {
  const char* name;
  uint64_t commHash;
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
};

// ---- v1 ----
struct ncclProfilerEventDescr_v1_t {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      const char* name;
      uint64_t commHash;
      uint64_t seqNumber;
      uint8_t func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      uint8_t datatype;
      uint32_t op;
      size_t trafficBytes;
      uint8_t nMaxChannels;
      uint8_t nWarps;
      uint8_t algo;
      uint8_t proto;
      int isCollnet;
      int isNvls;
    } coll;
    struct {
      const char* name;
      uint64_t commHash;
      uint8_t func;
      void* buff;
      uint8_t datatype;
      size_t count;
      int peer;
    } p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
  };
};

/// The state arguments of v1 to v3.
union ncclProfilerEventStateArgs_v1_t {
  struct {
    size_t transSize;
    int steps;
  } proxyOp;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
};
typedef ncclProfilerEventStateArgs_v1_t ncclProfilerEventStateArgs_v2_t;
typedef ncclProfilerEventStateArgs_v1_t ncclProfilerEventStateArgs_v3_t;

// ---- v2 ----
struct ncclProfilerEventDescr_v2_t {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      const char* name;
      uint64_t commHash;
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      size_t trafficBytes;
      uint8_t nMaxChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    P2pDescrV2 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
  };
};

// ---- v3 ----
struct ncclProfilerEventDescr_v3_t {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      const char* name;
      uint64_t commHash;
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nMaxChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    P2pDescrV2 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    struct {
      uint8_t channelId;
    } kernelCh;
    NetPluginDescr netPlugin;
  };
};

// ---- v4 ----
struct ncclProfilerEventDescr_v4_t {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
    } p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    NetPluginDescr netPlugin;
  };
};

/// The state arguments of v4 to v6.
union ncclProfilerEventStateArgs_v4_t {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
};
typedef ncclProfilerEventStateArgs_v4_t ncclProfilerEventStateArgs_v5_t;
typedef ncclProfilerEventStateArgs_v4_t ncclProfilerEventStateArgs_v6_t;

// ---- v5 and v6: the union's members up to netPlugin are the same ----
#define BRAID_PROFILER_V5_MEMBERS \
  struct {                        \
    bool graphCaptured;           \
    int groupDepth;               \
  } groupApi;                     \
  struct {                        \
    const char* func;             \
    size_t count;                 \
    const char* datatype;         \
    int root;                     \
    void* stream;                 \
    bool graphCaptured;           \
  } collApi;                      \
  struct {                        \
    const char* func;             \
    size_t count;                 \
    const char* datatype;         \
    void* stream;                 \
    bool graphCaptured;           \
  } p2pApi;                       \
  struct {                        \
    void* stream;                 \
  } kernelLaunch;                 \
  struct {                        \
    uint64_t seqNumber;           \
    const char* func;             \
    void const* sendBuff;         \
    void* recvBuff;               \
    size_t count;                 \
    int root;                     \
    const char* datatype;         \
    uint8_t nChannels;            \
    uint8_t nWarps;               \
    const char* algo;             \
    const char* proto;            \
    void* parentGroup;            \
  } coll;                         \
  struct {                        \
    const char* func;             \
    void* buff;                   \
    const char* datatype;         \
    size_t count;                 \
    int peer;                     \
    uint8_t nChannels;            \
    void* parentGroup;            \
  } p2p;                          \
  ProxyOpDescr proxyOp;           \
  ProxyStepDescr proxyStep;       \
  struct {                        \
    uint8_t channelId;            \
    uint64_t pTimer;              \
  } kernelCh;                     \
  NetPluginDescr netPlugin;

struct ncclProfilerEventDescr_v5_t {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    BRAID_PROFILER_V5_MEMBERS
  };
};

struct ncclProfilerEventDescr_v6_t {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    BRAID_PROFILER_V5_MEMBERS
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      const char* syncStrategy;
      bool intraBatchSync;
      uint32_t batchSize;
      uint32_t numBatches;
      uint32_t ceSeqNum;
      void* stream;
    } ceColl;
    struct {
      bool isComplete;
      int nRanks;
    } ceCollSync;
    struct {
      int numOps;
      size_t totalBytes;
      bool useIntraSync;
    } ceCollBatch;
  };
};
#undef BRAID_PROFILER_V5_MEMBERS

// ---- the tables ----
/// What every version's table shares but init: startEvent, stopEvent, recordEventState,
/// finalize, over that version's descriptor and state arguments.
template <typename Descr, typename Args, typename Init>
struct ncclProfilerTable {
  using DescrType = Descr;  // for braid's adapters: the layout is the fields below alone
  using ArgsType = Args;
  const char* name;
  Init init;
  ncclResult_t (*startEvent)(void* context, void** eHandle, Descr* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_t eState,
                                   Args* eStateArgs);
  ncclResult_t (*finalize)(void* context);
};

/// v1 to v3: init gives the context and takes the mask, nothing else.
typedef ncclResult_t (*InitV1)(void** context, int* eActivationMask);
/// v4: the communicator's name, hash, nodes, ranks, rank and a logger too.
typedef ncclResult_t (*InitV4)(void** context, int* eActivationMask, const char* commName,
                               uint64_t commHash, int nNodes, int nranks, int rank,
                               ncclDebugLogger_t logfn);
/// v5, v6: the communicator id first.
typedef ncclResult_t (*InitV5)(void** context, uint64_t commId, int* eActivationMask,
                               const char* commName, int nNodes, int nranks, int rank,
                               ncclDebugLogger_t logfn);

typedef ncclProfilerTable<ncclProfilerEventDescr_v1_t, ncclProfilerEventStateArgs_v1_t, InitV1>
    ncclProfiler_v1_t;
typedef ncclProfilerTable<ncclProfilerEventDescr_v2_t, ncclProfilerEventStateArgs_v2_t, InitV1>
    ncclProfiler_v2_t;
typedef ncclProfilerTable<ncclProfilerEventDescr_v3_t, ncclProfilerEventStateArgs_v3_t, InitV1>
    ncclProfiler_v3_t;
typedef ncclProfilerTable<ncclProfilerEventDescr_v4_t, ncclProfilerEventStateArgs_v4_t, InitV4>
    ncclProfiler_v4_t;
typedef ncclProfilerTable<ncclProfilerEventDescr_v5_t, ncclProfilerEventStateArgs_v5_t, InitV5>
    ncclProfiler_v5_t;
typedef ncclProfilerTable<ncclProfilerEventDescr_v6_t, ncclProfilerEventStateArgs_v6_t, InitV5>
    ncclProfiler_v6_t;

/// The symbols a plugin exports, newest first, as NCCL 2.30.7 probes them.
inline constexpr struct {
  int version;
  const char* symbol;
} kProfilerSymbols[] = {
    {6, "ncclProfiler_v6"}, {5, "ncclProfiler_v5"}, {4, "ncclProfiler_v4"},
    {3, "ncclProfiler_v3"}, {2, "ncclProfiler_v2"}, {1, "ncclProfiler_v1"},
};

// v1's numbers for what later versions name (ncclFunc_t, NCCL_ALGO_*, NCCL_PROTO_*).
enum : uint8_t {
  kFuncBroadcast = 0,
  kFuncReduce = 1,
  kFuncAllGather = 2,
  kFuncReduceScatter = 3,
  kFuncAllReduce = 4,
  kFuncSendRecv = 5,
  kFuncSend = 6,
  kFuncRecv = 7,
};
enum : uint8_t { kAlgoTree = 0, kAlgoRing = 1, kAlgoUndef = 0xff };
enum : uint8_t { kProtoLl = 0, kProtoLl128 = 1, kProtoSimple = 2, kProtoUndef = 0xff };

// The layouts NCCL's own headers give on LP64 (measured by compiling them), so that a field
// out of place fails the build rather than a plugin.
#if defined(__LP64__)
static_assert(sizeof(ncclProfilerEventDescr_v1_t) == 120, "v1 descriptor");
static_assert(offsetof(ncclProfilerEventDescr_v1_t, coll.proto) == 107, "v1 coll.proto");
static_assert(offsetof(ncclProfilerEventDescr_v1_t, coll.isNvls) == 112, "v1 coll.isNvls");
static_assert(offsetof(ncclProfilerEventDescr_v1_t, p2p.peer) == 72, "v1 p2p.peer");
static_assert(offsetof(ncclProfilerEventDescr_v1_t, proxyOp.isSend) == 44, "v1 proxyOp.isSend");
static_assert(sizeof(ncclProfilerEventDescr_v2_t) == 128, "v2 descriptor");
static_assert(offsetof(ncclProfilerEventDescr_v2_t, coll.proto) == 120, "v2 coll.proto");
static_assert(offsetof(ncclProfilerEventDescr_v2_t, p2p.peer) == 72, "v2 p2p.peer");
static_assert(sizeof(ncclProfilerEventDescr_v3_t) == 120, "v3 descriptor");
static_assert(offsetof(ncclProfilerEventDescr_v3_t, coll.proto) == 112, "v3 coll.proto");
static_assert(offsetof(ncclProfilerEventDescr_v3_t, netPlugin.data) == 32, "v3 netPlugin.data");
static_assert(sizeof(ncclProfilerEventDescr_v4_t) == 104, "v4 descriptor");
static_assert(offsetof(ncclProfilerEventDescr_v4_t, coll.proto) == 96, "v4 coll.proto");
static_assert(offsetof(ncclProfilerEventDescr_v4_t, p2p.nChannels) == 60, "v4 p2p.nChannels");
static_assert(offsetof(ncclProfilerEventDescr_v4_t, kernelCh.pTimer) == 32, "v4 kernelCh.pTimer");
static_assert(sizeof(ncclProfilerEventDescr_v5_t) == 112, "v5 descriptor");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.parentGroup) == 104, "v5 coll group");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, p2p.parentGroup) == 64, "v5 p2p group");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, collApi.graphCaptured) == 64, "v5 collApi");
static_assert(sizeof(ncclProfilerEventDescr_v6_t) == 112, "v6 descriptor");
static_assert(offsetof(ncclProfilerEventDescr_v6_t, coll.parentGroup) == 104, "v6 coll group");
static_assert(offsetof(ncclProfilerEventDescr_v6_t, ceColl.stream) == 104, "v6 ceColl.stream");
static_assert(offsetof(ncclProfilerEventDescr_v6_t, ceCollBatch.useIntraSync) == 40,
              "v6 ceCollBatch.useIntraSync");
static_assert(sizeof(ncclProfilerEventStateArgs_v1_t) == 16, "v1 state arguments");
static_assert(sizeof(ncclProfilerEventStateArgs_v4_t) == 8, "v4 state arguments");
static_assert(sizeof(ncclProfiler_v1_t) == 48 && sizeof(ncclProfiler_v6_t) == 48, "tables");
static_assert(offsetof(ncclProfiler_v6_t, finalize) == 40, "v6 finalize");
#endif

}  // namespace braid::profabi
