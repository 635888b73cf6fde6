// A tuner plugin written here for braid's tests (tuner_plugin_test.cc), exporting the table of
// NCCL's tuner ABI (src/tune/plugin/tuner_abi.h) that the build asks for: ncclTunerPlugin_v6 by
// default, ncclTunerPlugin_v2 alone with BRAID_TEST_TUNER_V2. It is also linked into a network
// plugin's library (libnccl-net-braidtest-tuner.so), as aws-ofi-nccl ships its tuner.
//
// What it answers comes from the environment of the process it is loaded into:
//   BRAID_TEST_TUNER_ALGO      tree or ring: all_reduce runs it (v6: the entry made cheapest in
//                              the cost table; v2: named as the algorithm, the protocol Simple)
//   BRAID_TEST_TUNER_CHANNELS  a channel count it sets for every call
//   BRAID_TEST_TUNER_CHUNK     v6: the chunk size in bytes its getChunkSize gives every call
//   BRAID_TEST_TUNER_CHUNK_FAIL 1: getChunkSize fails with ncclInternalError
//   BRAID_TEST_TUNER_FAIL_INIT 1: init fails with ncclInternalError
//   BRAID_TEST_TUNER_RECORD    a file each process appends to: "init vN ranks R nodes H",
//                              "call F bytes B" for each getCollInfo, "chunk F algo A proto P
//                              channels C size S" for each getChunkSize (S: braid's), "finalize vN"
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tune/plugin/tuner_abi.h"

namespace {

using namespace braid::tunerabi;  // NOLINT(google-build-using-namespace): the ABI's names

#ifdef BRAID_TEST_TUNER_V2
constexpr int kVersion = 2;
#else
constexpr int kVersion = 6;
#endif

void record(const char* fmt, ...) {
  const char* path = getenv("BRAID_TEST_TUNER_RECORD");
  if (path == nullptr) return;
  FILE* f = fopen(path, "a");
  if (f == nullptr) return;
  va_list args;
  va_start(args, fmt);
  vfprintf(f, fmt, args);
  va_end(args);
  fclose(f);
}

// The row BRAID_TEST_TUNER_ALGO names; NCCL_ALGO_UNDEF when it names none.
int forcedAlgorithm() {
  const char* algo = getenv("BRAID_TEST_TUNER_ALGO");
  if (algo == nullptr) return NCCL_ALGO_UNDEF;
  if (strcmp(algo, "tree") == 0) return NCCL_ALGO_TREE;
  if (strcmp(algo, "ring") == 0) return NCCL_ALGO_RING;
  return NCCL_ALGO_UNDEF;
}

int forcedChannels() {
  const char* channels = getenv("BRAID_TEST_TUNER_CHANNELS");
  return channels != nullptr ? atoi(channels) : 0;
}

struct Context {
  int magic = 0x7e57;  // getCollInfo and finalize must be given back what init made
};

ncclResult_t initCommon(size_t nranks, size_t nnodes, ncclDebugLogger_t log, void** context) {
  if (getenv("BRAID_TEST_TUNER_FAIL_INIT") != nullptr) return ncclInternalError;
  if (log != nullptr)
    log(NCCL_LOG_INFO, 0, __FILE__, __LINE__, "braidtuner init, %zu ranks", nranks);
  record("init v%d ranks %zu nodes %zu\n", kVersion, nranks, nnodes);
  *context = new Context();
  return ncclSuccess;
}

bool valid(void* context) {
  return context != nullptr && static_cast<Context*>(context)->magic == 0x7e57;
}

ncclResult_t finalizeCommon(void* context) {
  if (!valid(context)) return ncclInternalError;
  record("finalize v%d\n", kVersion);
  delete static_cast<Context*>(context);
  return ncclSuccess;
}

#ifdef BRAID_TEST_TUNER_V2
ncclResult_t initV2(size_t nranks, size_t nnodes, ncclDebugLogger_t log, void** context) {
  return initCommon(nranks, nnodes, log, context);
}

ncclResult_t getCollInfoV2(void* context, ncclFunc_t collType, size_t nBytes,
                           int /*collNetSupport*/, int /*nvlsSupport*/, int /*numPipeOps*/,
                           int* algorithm, int* protocol, int* nChannels) {
  if (!valid(context)) return ncclInternalError;
  record("call %d bytes %zu\n", static_cast<int>(collType), nBytes);
  if (collType == ncclFuncAllReduce && forcedAlgorithm() != NCCL_ALGO_UNDEF) {
    *algorithm = forcedAlgorithm();
    *protocol = NCCL_PROTO_SIMPLE;
  }
  if (forcedChannels() > 0) *nChannels = forcedChannels();
  return ncclSuccess;
}
#else
ncclResult_t initV6(void** context, uint64_t /*commId*/, size_t nranks, size_t nnodes,
                    ncclDebugLogger_t log, ncclNvlDomainInfo_v5_t* nvl,
                    ncclTunerConstants_v5_t* constants) {
  if (nvl == nullptr || constants == nullptr || nvl->nNvlDomains != static_cast<int>(nnodes)) {
    return ncclInvalidArgument;
  }
  return initCommon(nranks, nnodes, log, context);
}

ncclResult_t getCollInfoV6(void* context, ncclFunc_t collType, size_t nBytes, int /*numPipeOps*/,
                           float** collCostTable, int numAlgo, int numProto, int /*regBuff*/,
                           int* nChannels) {
  if (!valid(context) || numAlgo != NCCL_NUM_ALGORITHMS || numProto != NCCL_NUM_PROTOCOLS) {
    return ncclInvalidArgument;
  }
  record("call %d bytes %zu\n", static_cast<int>(collType), nBytes);
  auto table = reinterpret_cast<float(*)[NCCL_NUM_PROTOCOLS]>(collCostTable);
  const int forced = forcedAlgorithm();
  if (collType == ncclFuncAllReduce && forced != NCCL_ALGO_UNDEF) {
    // Every other entry braid offered is made dearer than the forced row's Simple one.
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; ++a) {
      for (int p = 0; p < NCCL_NUM_PROTOCOLS; ++p) {
        if (table[a][p] == NCCL_ALGO_PROTO_IGNORE) continue;
        table[a][p] = (a == forced && p == NCCL_PROTO_SIMPLE) ? 0.0f : 1e9f;
      }
    }
  }
  if (forcedChannels() > 0) *nChannels = forcedChannels();
  return ncclSuccess;
}

ncclResult_t getChunkSizeV6(void* context, ncclFunc_t collType, size_t /*nBytes*/, int algo,
                            int proto, int nChannels, size_t* chunkSize) {
  if (!valid(context) || chunkSize == nullptr) return ncclInvalidArgument;
  record("chunk %d algo %d proto %d channels %d size %zu\n", static_cast<int>(collType), algo,
         proto, nChannels, *chunkSize);
  if (getenv("BRAID_TEST_TUNER_CHUNK_FAIL") != nullptr) return ncclInternalError;
  const char* chunk = getenv("BRAID_TEST_TUNER_CHUNK");
  if (chunk != nullptr) *chunkSize = strtoull(chunk, nullptr, 10);
  return ncclSuccess;
}
#endif

}  // namespace

extern "C" {

#ifdef BRAID_TEST_TUNER_V2
__attribute__((visibility("default"))) extern const ncclTuner_v2_t ncclTunerPlugin_v2;
const ncclTuner_v2_t ncclTunerPlugin_v2 = {"braidtuner", initV2, getCollInfoV2, finalizeCommon};
#else
__attribute__((visibility("default"))) extern const ncclTuner_v6_t ncclTunerPlugin_v6;
const ncclTuner_v6_t ncclTunerPlugin_v6 = {"braidtuner", initV6, getCollInfoV6, finalizeCommon,
                                           getChunkSizeV6};
#endif
}
