/*
 * nccl232_program.c: a C program written against NCCL 2.32's nccl.h that calls every function
 * 2.31 and 2.32 added, on a two-rank host communicator ("host") or on two emulated GPUs ("gpu"),
 * and checks each answer: the collectives with per-call options (their results, and on a GPU the
 * launch-completion event a second stream waits on), the communicator config of every release's
 * size, ncclSetEncryption's config checks, and what braid declines (Compute Fabric Transport)
 * with which result. One thread drives both ranks through groups. It prints "OK" last, and the
 * first unexpected answer otherwise (ctest api.nccl232_*).
 *
 * The CFT host functions are not in nccl.h (they are NVIDIA's nccl_device headers'); the
 * prototypes below repeat their signatures with opaque pointers.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "braid_ext.h"
#include "nccl.h"

typedef struct {
  int nRanks, rank, stride;
} Team;
ncclResult_t ncclGetPeerDeviceLeInfo(ncclWindow_t window, size_t offset, int peerWorld,
                                     uint32_t* leId, size_t* leOffset);
ncclResult_t ncclGetMultimemDeviceLeInfo(ncclWindow_t window, size_t offset, uint32_t* leId,
                                         size_t* leOffset);
ncclResult_t ncclGetCftDeviceLeInfo(ncclWindow_t window, size_t offset, int peerCft, Team cftTeam,
                                    uint32_t* leId, size_t* leOffset);
Team ncclTeamCft(ncclComm_t comm, int mode);
Team ncclTeamCftMultimem(ncclComm_t comm);
ncclResult_t ncclCftBarrierCreateRequirement(Team team, int nBarriers, void* outHandle,
                                             void* outReq);

#define RANKS 2
#define COUNT 4096

static int failures = 0;

static void fail(const char* file, int line, const char* what) {
  printf("FAIL %s:%d: %s (%s)\n", file, line, what, ncclGetLastError(NULL));
  ++failures;
}

#define EXPECT(what, cond)                       \
  do {                                           \
    if (!(cond)) fail(__FILE__, __LINE__, what); \
  } while (0)

#define EXPECT_RESULT(call, want) EXPECT(#call " gives " #want, (call) == (want))

static int onGpu = 0;
static const braidDeviceApi* dev = NULL;

/* Each rank's buffers (host memory, or its device's), streams and launch event. */
struct Rank {
  ncclComm_t comm;
  float* buf;
  float* aux;
  cudaStream_t stream;
  cudaStream_t side;
  void* event;
  float host[COUNT];
};
static struct Rank ranks[RANKS];

static void fillOnes(struct Rank* r, float* buffer) {
  int i;
  for (i = 0; i < COUNT; ++i) r->host[i] = 1.0f;
  if (!onGpu) {
    memcpy(buffer, r->host, sizeof r->host);
  } else {
    dev->copy(buffer, r->host, sizeof r->host, r->stream);
    dev->streamSynchronize(r->stream);
  }
}

/* Reads `buffer` back, on the GPU on the side stream after it waited for the launch event (the
 * event a group's all-reduce recorded), and checks that every element is `expect`. */
static int readsBack(struct Rank* r, const float* buffer, float expect, int afterEvent) {
  int i;
  if (onGpu) {
    if (afterEvent) dev->streamWaitEvent(r->side, r->event);
    dev->copy(r->host, buffer, sizeof r->host, afterEvent ? r->side : r->stream);
    dev->streamSynchronize(afterEvent ? r->side : r->stream);
  } else {
    memcpy(r->host, buffer, sizeof r->host);
  }
  for (i = 0; i < COUNT; ++i) {
    if (r->host[i] != expect) return 0;
  }
  return 1;
}

/* Every release's ncclConfig_t, each making a communicator of one rank. */
static void checkConfigSizes(void) {
  const size_t sizes[] = {offsetof(ncclConfig_t, graphUsageMode),
                          offsetof(ncclConfig_t, launchOrderImplicit),
                          offsetof(ncclConfig_t, nvlsHostMode), sizeof(ncclConfig_t)};
  size_t i;
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    ncclUniqueId id;
    ncclComm_t comm = NULL;
    config.size = sizes[i];
    config.hostCftMode = ncclHostCftDisable;
    config.nvlsHostMode =
        ncclNvlsHostModeDisableTransport | ncclNvlsHostModeDisableSymmetricMultimem;
    EXPECT_RESULT(ncclGetUniqueId(&id), ncclSuccess);
    EXPECT_RESULT(ncclCommInitRankConfig(&comm, 1, id, 0, &config), ncclSuccess);
    if (comm != NULL) EXPECT_RESULT(ncclCommDestroy(comm), ncclSuccess);
  }
}

/* One grouped call of `fn` per rank; returns the group's result. */
typedef ncclResult_t (*PerRank)(struct Rank* r, int rank, const ncclCollConfig_t* config);

static ncclResult_t grouped(PerRank fn, const ncclCollConfig_t* config) {
  int rank;
  ncclResult_t first = ncclSuccess;
  ncclGroupStart();
  for (rank = 0; rank < RANKS; ++rank) {
    ncclResult_t r = fn(&ranks[rank], rank, config);
    if (first == ncclSuccess) first = r;
  }
  if (ncclGroupEnd() != ncclSuccess && first == ncclSuccess) first = ncclInternalError;
  return first;
}

static ncclResult_t allReduce(struct Rank* r, int rank, const ncclCollConfig_t* config) {
  ncclCollConfig_t mine = config != NULL ? *config : (ncclCollConfig_t)NCCL_COLLCONFIG_INITIALIZER;
  (void)rank;
  mine.launchCompletionEvent = onGpu && config != NULL ? (cudaEvent_t)r->event : NULL;
  return ncclAllReduceConfig(r->buf, r->buf, COUNT, ncclFloat, ncclSum, r->comm, r->stream,
                             config != NULL ? &mine : NULL);
}

static ncclResult_t otherCollectives(struct Rank* r, int rank, const ncclCollConfig_t* config) {
  const size_t n = COUNT / RANKS;
  float* aux = r->aux;
  ncclResult_t s = ncclSuccess, t;
  (void)rank;
#define KEEP(call) t = (call), s = s != ncclSuccess ? s : t
  KEEP(ncclBroadcastConfig(r->buf, aux, COUNT, ncclFloat, 0, r->comm, r->stream, config));
  KEEP(ncclReduceConfig(r->buf, aux, COUNT, ncclFloat, ncclSum, 1, r->comm, r->stream, config));
  KEEP(ncclAllGatherConfig(r->buf, aux, n, ncclFloat, r->comm, r->stream, config));
  KEEP(ncclReduceScatterConfig(r->buf, aux, n, ncclFloat, ncclMax, r->comm, r->stream, config));
  KEEP(ncclAlltoAllConfig(r->buf, aux, n, ncclFloat, r->comm, r->stream, config));
  KEEP(ncclGatherConfig(r->buf, aux, n, ncclFloat, 0, r->comm, r->stream, config));
  KEEP(ncclScatterConfig(r->buf, aux, n, ncclFloat, 1, r->comm, r->stream, config));
#undef KEEP
  return s;
}

static void checkCollectives(void) {
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  ncclCollConfig_t bad = NCCL_COLLCONFIG_INITIALIZER;
  int rank;
  config.algSelection = "ring";
  config.maxCTAs = 1;
  config.CTAPolicy = NCCL_CTA_POLICY_EFFICIENCY;
  config.userProfilerTag = 42;
  for (rank = 0; rank < RANKS; ++rank) fillOnes(&ranks[rank], ranks[rank].buf);
  EXPECT_RESULT(grouped(allReduce, &config), ncclSuccess);
  for (rank = 0; rank < RANKS; ++rank) {
    EXPECT("the configured all-reduce summed, seen after its launch event",
           readsBack(&ranks[rank], ranks[rank].buf, 2.0f, 1));
  }
  EXPECT_RESULT(grouped(allReduce, NULL), ncclSuccess); /* NULL: the plain call */
  for (rank = 0; rank < RANKS; ++rank) {
    EXPECT("the plain form summed again", readsBack(&ranks[rank], ranks[rank].buf, 4.0f, 0));
  }
  config.algSelection = NULL; /* gather, scatter and all-to-all have no algorithm to select */
  EXPECT_RESULT(grouped(otherCollectives, &config), ncclSuccess);
  EXPECT_RESULT(grouped(otherCollectives, NULL), ncclSuccess);
  for (rank = 0; rank < RANKS; ++rank) {
    /* Every collective of the two rounds moved 4s; the scatter from rank 1 came last. */
    EXPECT("the collectives moved the 4s", readsBack(&ranks[rank], ranks[rank].aux, 4.0f, 0));
  }
  bad.magic = 1;
  EXPECT_RESULT(ncclAllReduceConfig(ranks[0].buf, ranks[0].buf, COUNT, ncclFloat, ncclSum,
                                    ranks[0].comm, ranks[0].stream, &bad),
                ncclInvalidArgument);
  bad = config;
  bad.algSelection = "NVLS";
  EXPECT_RESULT(ncclAllReduceConfig(ranks[0].buf, ranks[0].buf, COUNT, ncclFloat, ncclSum,
                                    ranks[0].comm, ranks[0].stream, &bad),
                ncclInvalidArgument);
}

/* What braid declines, and how. */
static void checkDeclined(void) {
  char opaque[64];
  uint32_t le = 7;
  size_t leOffset = 7;
  Team team = {1, 0, 1}, cft;
  memset(opaque, 0, sizeof opaque);
  EXPECT_RESULT(ncclSetEncryption(NULL), ncclSuccess); /* asks for none */
  {
    ncclEncryptionConfig_t encryption = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
    EXPECT("a 32-byte config", sizeof(encryption) == 32);
    encryption.magic = 0; /* not made by the initializer */
    EXPECT_RESULT(ncclSetEncryption(&encryption), ncclInvalidArgument);
    EXPECT("the refusal names the function", strstr(ncclGetLastError(NULL), "ncclSetEncryption"));
  }
  EXPECT_RESULT(ncclGetPeerDeviceLeInfo(NULL, 0, 0, &le, &leOffset), ncclInvalidUsage);
  EXPECT_RESULT(ncclGetMultimemDeviceLeInfo(NULL, 0, &le, &leOffset), ncclInvalidUsage);
  EXPECT_RESULT(ncclGetCftDeviceLeInfo(NULL, 0, 0, team, &le, &leOffset), ncclInvalidUsage);
  EXPECT_RESULT(ncclCftBarrierCreateRequirement(team, 1, opaque, opaque), ncclInvalidUsage);
  cft = ncclTeamCft(ranks[0].comm, 0);
  EXPECT("no CFT team", cft.nRanks == 0);
  cft = ncclTeamCftMultimem(ranks[0].comm);
  EXPECT("no CFT multicast team", cft.nRanks == 0);
}

static int setUp(void) {
  int devices[RANKS] = {0, 1};
  ncclComm_t comms[RANKS];
  int rank;
  if (ncclCommInitAll(comms, RANKS, onGpu ? devices : NULL) != ncclSuccess) return 0;
  for (rank = 0; rank < RANKS; ++rank) {
    struct Rank* r = &ranks[rank];
    r->comm = comms[rank];
    if (!onGpu) {
      r->buf = (float*)malloc(COUNT * sizeof(float));
      r->aux = (float*)malloc(COUNT * sizeof(float));
      continue;
    }
    dev->setDevice(rank);
    if (dev->alloc((void**)&r->buf, COUNT * sizeof(float)) != ncclSuccess ||
        dev->alloc((void**)&r->aux, COUNT * sizeof(float)) != ncclSuccess ||
        dev->streamCreate(&r->stream) != ncclSuccess ||
        dev->streamCreate(&r->side) != ncclSuccess || dev->eventCreate(&r->event) != ncclSuccess) {
      return 0;
    }
  }
  return 1;
}

static void tearDown(void) {
  int rank;
  for (rank = 0; rank < RANKS; ++rank) {
    struct Rank* r = &ranks[rank];
    if (onGpu) {
      dev->setDevice(rank);
      dev->streamSynchronize(r->stream);
      dev->release(r->buf);
      dev->release(r->aux);
      dev->streamDestroy(r->stream);
      dev->streamDestroy(r->side);
      dev->eventDestroy(r->event);
    } else {
      free(r->buf);
      free(r->aux);
    }
    ncclCommDestroy(r->comm);
  }
}

int main(int argc, char** argv) {
  int version = 0;
  onGpu = argc > 1 && strcmp(argv[1], "gpu") == 0;
  if (onGpu) {
    dev = braidGetDeviceApi();
    if (dev == NULL || dev->deviceCount() < RANKS) {
      printf("FAIL: the gpu mode needs two (emulated) GPUs: BRAID_EMULATE_GPUS=2\n");
      return 1;
    }
  }
  EXPECT_RESULT(ncclGetVersion(&version), ncclSuccess);
  EXPECT("the version is 2.32.3's", version == NCCL_VERSION_CODE && version == 23203);
  EXPECT("NCCL_VERSION agrees", NCCL_VERSION(2, 32, 3) == NCCL_VERSION_CODE);
  checkConfigSizes();
  if (!setUp()) {
    printf("FAIL: the communicator of two ranks was not made (%s)\n", ncclGetLastError(NULL));
    return 1;
  }
  checkCollectives();
  checkDeclined();
  tearDown();
  if (failures != 0) {
    printf("%d check(s) failed\n", failures);
    return 1;
  }
  printf("OK: every NCCL 2.31/2.32 function answered as expected (%s)\n",
         onGpu ? "emulated GPU" : "host communicator");
  return 0;
}
