/*
 * nccl230_program.c: a C program written against NCCL 2.30's nccl.h that calls every function
 * 2.29 and 2.30 added, on a host communicator ("host") or on the emulated GPU ("gpu"), and
 * checks each answer: what braid does, and what it declines with which result. The grow makes
 * a communicator of two ranks (this thread and a new one), which then suspends and resumes. It
 * prints "OK" last, and the first unexpected answer otherwise (ctest api.nccl230_*).
 *
 * The device API's entry points are declared in NVIDIA's nccl_device headers, not in nccl.h;
 * the prototypes below repeat theirs.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "braid_ext.h"
#include "nccl.h"

typedef enum { GinNone = 0 } GinType;
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int rank;
  int nRanks;
  int cudaDev;
  int nvmlDev;
  bool deviceApiSupport;
  bool multimemSupport;
  GinType ginType;
  int nLsaTeams;
  bool hostRmaSupport;
  GinType railedGinType;
} CommProperties;
ncclResult_t ncclCommQueryProperties(ncclComm_t comm, CommProperties* props);
ncclResult_t ncclGetLsaDevicePointer(ncclWindow_t window, size_t offset, int lsaRank,
                                     void** outPtr);
ncclResult_t ncclGetPeerDevicePointer(ncclWindow_t window, size_t offset, int peer, void** outPtr);
ncclResult_t ncclGetLsaMultimemDevicePointer(ncclWindow_t window, size_t offset, void** outPtr);
ncclResult_t ncclGinOutboxCreateRequirement(int nBlocks, int sizeLog2, void* outHandle,
                                            void* outReq);

/* Failures so far, counted by both threads of the grown communicator. */
static int failures = 0;
static pthread_mutex_t failuresLock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char* file, int line, const char* what) {
  pthread_mutex_lock(&failuresLock);
  printf("FAIL %s:%d: %s (%s)\n", file, line, what, ncclGetLastError(NULL));
  ++failures;
  pthread_mutex_unlock(&failuresLock);
}

static int failuresSoFar(void) {
  int n;
  pthread_mutex_lock(&failuresLock);
  n = failures;
  pthread_mutex_unlock(&failuresLock);
  return n;
}

#define EXPECT(what, cond)                       \
  do {                                           \
    if (!(cond)) fail(__FILE__, __LINE__, what); \
  } while (0)

#define EXPECT_RESULT(call, want) EXPECT(#call " gives " #want, (call) == (want))

static bool onGpu = false;
static const braidDeviceApi* dev = NULL;

/* An all-reduce of `n` ones (float sum) on `comm`: every element must become `expect`. */
static ncclResult_t sumOnes(ncclComm_t comm, int n, float expect) {
  float host[64];
  int i;
  for (i = 0; i < n; ++i) host[i] = 1.0f;
  if (!onGpu) {
    ncclResult_t r = ncclAllReduce(host, host, (size_t)n, ncclFloat, ncclSum, comm, NULL);
    if (r != ncclSuccess) return r;
  } else {
    void* buffer = NULL;
    cudaStream_t stream = NULL;
    ncclResult_t r;
    if (dev->alloc(&buffer, sizeof host) != ncclSuccess) return ncclInternalError;
    if (dev->streamCreate(&stream) != ncclSuccess) return ncclInternalError;
    dev->copy(buffer, host, (size_t)n * sizeof(float), stream);
    r = ncclAllReduce(buffer, buffer, (size_t)n, ncclFloat, ncclSum, comm, stream);
    dev->copy(host, buffer, (size_t)n * sizeof(float), stream);
    dev->streamSynchronize(stream);
    dev->streamDestroy(stream);
    dev->release(buffer);
    if (r != ncclSuccess) return r;
  }
  for (i = 0; i < n; ++i) {
    if (host[i] != expect) return ncclInternalError;
  }
  return ncclSuccess;
}

/* Suspend and resume on one rank of a communicator whose every rank does the same (braid's
 * suspend is collective): the memory it reports goes down to what a suspend keeps, calls fail
 * until the resume, and afterwards the all-reduce is right again. Returns the failures seen. */
static int checkSuspend(ncclComm_t comm, int nranks) {
  uint64_t held = 0, kept = 0, releasable = 0, after = 0, state = 9;
  const int before = failuresSoFar();
  EXPECT_RESULT(sumOnes(comm, 16, (float)nranks), ncclSuccess); /* its FIFOs are made */
  EXPECT_RESULT(ncclCommMemStats(comm, ncclStatGpuMemTotal, &held), ncclSuccess);
  EXPECT_RESULT(ncclCommMemStats(comm, ncclStatGpuMemPersist, &kept), ncclSuccess);
  EXPECT_RESULT(ncclCommMemStats(comm, ncclStatGpuMemSuspend, &releasable), ncclSuccess);
  EXPECT("the figures add up", held == kept + releasable);
  EXPECT("a GPU communicator's FIFOs take device memory; a host one's none",
         onGpu ? releasable > 0 : held == 0);
  EXPECT_RESULT(ncclCommSuspend(comm, NCCL_SUSPEND_MEM), ncclSuccess);
  EXPECT_RESULT(ncclCommMemStats(comm, ncclStatGpuMemSuspended, &state), ncclSuccess);
  EXPECT("suspended", state == 1);
  EXPECT_RESULT(ncclCommMemStats(comm, ncclStatGpuMemTotal, &after), ncclSuccess);
  EXPECT("the memory went down to what a suspend keeps", after == kept);
  EXPECT_RESULT(sumOnes(comm, 4, (float)nranks), ncclInvalidUsage); /* not while suspended */
  EXPECT_RESULT(ncclCommSuspend(comm, NCCL_SUSPEND_MEM), ncclInvalidUsage); /* already */
  EXPECT_RESULT(ncclCommResume(comm), ncclSuccess);
  EXPECT_RESULT(ncclCommResume(comm), ncclInvalidUsage); /* not suspended any more */
  EXPECT_RESULT(sumOnes(comm, 16, (float)nranks), ncclSuccess);
  EXPECT_RESULT(ncclCommMemStats(comm, ncclStatGpuMemSuspended, &state), ncclSuccess);
  EXPECT("resumed", state == 0);
  return failuresSoFar() - before;
}

struct NewRank {
  ncclUniqueId id;
  ncclComm_t comm;
  ncclResult_t made;
  ncclResult_t summed;
};

static void* joinGrow(void* arg) {
  struct NewRank* r = (struct NewRank*)arg;
  if (onGpu) dev->setDevice(1);
  r->made = ncclCommGrow(NULL, 2, &r->id, 1, &r->comm, NULL);
  r->summed = r->made == ncclSuccess ? sumOnes(r->comm, 16, 2.0f) : r->made;
  if (r->summed == ncclSuccess && checkSuspend(r->comm, 2) != 0) r->summed = ncclInternalError;
  return NULL;
}

static void checkParameters(void) {
  ncclParamHandle_t h = NULL;
  int32_t i32 = 0;
  int64_t i64 = 0;
  int8_t i8 = 0;
  int16_t i16 = 0;
  uint8_t u8 = 0;
  uint16_t u16 = 0;
  uint32_t u32 = 0;
  uint64_t u64 = 0;
  const char* text = NULL;
  const char** keys = NULL;
  int len = 0, k;
  char raw[64];
  bool listed = false;
  EXPECT_RESULT(ncclParamBind(&h, "NCCL_MIN_NCHANNELS"), ncclSuccess);
  EXPECT_RESULT(ncclParamGetI32(h, &i32), ncclSuccess);
  EXPECT("NCCL_MIN_NCHANNELS reads the environment's 3", i32 == 3);
  EXPECT_RESULT(ncclParamGetI64(h, &i64), ncclInvalidArgument); /* a 32-bit parameter */
  EXPECT_RESULT(ncclParamGetI8(h, &i8), ncclInvalidArgument);
  EXPECT_RESULT(ncclParamGetI16(h, &i16), ncclInvalidArgument);
  EXPECT_RESULT(ncclParamGetU8(h, &u8), ncclInvalidArgument);
  EXPECT_RESULT(ncclParamGetU16(h, &u16), ncclInvalidArgument);
  EXPECT_RESULT(ncclParamGetU32(h, &u32), ncclSuccess);
  EXPECT_RESULT(ncclParamGetU64(h, &u64), ncclInvalidArgument);
  EXPECT_RESULT(ncclParamGet(h, raw, sizeof raw, &len), ncclSuccess);
  EXPECT("ncclParamGet copies 4 bytes", len == 4);
  EXPECT_RESULT(ncclParamBind(&h, "BUFFSIZE"), ncclSuccess); /* without a prefix */
  EXPECT_RESULT(ncclParamGetI64(h, &i64), ncclSuccess);
  EXPECT("the default FIFO is 4 MiB", i64 == 4194304);
  EXPECT_RESULT(ncclParamBind(&h, "NCCL_ALGO"), ncclSuccess);
  EXPECT_RESULT(ncclParamGetStr(h, &text), ncclSuccess);
  EXPECT("NCCL_ALGO reads the environment's ring", text != NULL && strcmp(text, "ring") == 0);
  EXPECT_RESULT(ncclParamGetI32(h, &i32), ncclInvalidArgument); /* a string */
  EXPECT_RESULT(ncclParamBind(&h, "NCCL_NO_SUCH_KNOB"), ncclInvalidArgument);
  EXPECT_RESULT(ncclParamGetParameter("BRAID_BUFFSIZE", &text, &len), ncclSuccess);
  EXPECT("the text of BRAID_BUFFSIZE", text != NULL && strcmp(text, "4194304") == 0 && len == 7);
  EXPECT_RESULT(ncclParamGetAllParameterKeys(&keys, &len), ncclSuccess);
  for (k = 0; k < len; ++k) listed = listed || strcmp(keys[k], "NCCL_NCHANNELS") == 0;
  EXPECT("NCCL_NCHANNELS is among the keys", listed);
  ncclParamDumpAll();
}

/* A window of a buffer from ncclMemAlloc on a GPU communicator of one rank: the rank's own
 * buffer through every pointer query, none after deregistration. */
static void checkGpuWindow(ncclComm_t comm) {
  void* buffer = NULL;
  void* pointer = NULL;
  ncclWindow_t win = NULL;
  EXPECT_RESULT(ncclMemAlloc(&buffer, 4096), ncclSuccess);
  EXPECT_RESULT(ncclCommWindowRegister(comm, buffer, 4096, &win, NCCL_WIN_COLL_SYMMETRIC),
                ncclSuccess);
  EXPECT("a window", win != NULL);
  EXPECT_RESULT(ncclWinGetUserPtr(comm, win, &pointer), ncclSuccess);
  EXPECT("the user pointer", pointer == buffer);
  EXPECT_RESULT(ncclGetLsaDevicePointer(win, 8, 0, &pointer), ncclSuccess);
  EXPECT("the LSA pointer", pointer == (char*)buffer + 8);
  EXPECT_RESULT(ncclGetPeerDevicePointer(win, 16, 0, &pointer), ncclSuccess);
  EXPECT("the peer pointer", pointer == (char*)buffer + 16);
  EXPECT_RESULT(ncclGetLsaMultimemDevicePointer(win, 0, &pointer), ncclSuccess);
  EXPECT("no multimem pointer", pointer == NULL);
  EXPECT_RESULT(ncclCommWindowDeregister(comm, win), ncclSuccess);
  EXPECT_RESULT(ncclGetLsaDevicePointer(win, 0, 0, &pointer), ncclInvalidArgument);
  EXPECT_RESULT(ncclMemFree(buffer), ncclSuccess);
}

static void checkOneRank(ncclComm_t comm) {
  CommProperties props;
  ncclWindow_t win = (ncclWindow_t)1;
  void* user = (void*)1;
  void* pointer = (void*)1;
  char buffer[4096];
  ncclWaitSignalDesc_t desc = {1, 0, 0, 0};

  memset(&props, 0, sizeof props);
  props.size = sizeof props;
  props.magic = NCCL_API_MAGIC;
  props.version = NCCL_VERSION_CODE;
  EXPECT_RESULT(ncclCommQueryProperties(comm, &props), ncclSuccess);
  EXPECT("properties: one rank, rank 0", props.nRanks == 1 && props.rank == 0);
  EXPECT("properties: the device API on a GPU (one host), no host RMA",
         props.deviceApiSupport == onGpu && !props.hostRmaSupport);
  EXPECT("properties: the device", props.cudaDev == (onGpu ? 0 : -1));

  EXPECT_RESULT(ncclCommSuspend(comm, 4), ncclInvalidArgument);
  EXPECT_RESULT(sumOnes(comm, 4, 1.0f), ncclSuccess);

  if (onGpu) {
    checkGpuWindow(comm);
    /* Memory that is not shareable fails on a GPU communicator, as NCCL's does, the window NULL. */
    EXPECT_RESULT(ncclCommWindowRegister(comm, buffer, sizeof buffer, &win, NCCL_WIN_DEFAULT),
                  ncclUnhandledCudaError);
    EXPECT("no window", win == NULL);
  } else {
    /* A host communicator declines as NCCL declines without symmetric memory. */
    EXPECT_RESULT(ncclCommWindowRegister(comm, buffer, sizeof buffer, &win, NCCL_WIN_DEFAULT),
                  ncclSuccess);
    EXPECT("no window", win == NULL);
    EXPECT_RESULT(ncclWinGetUserPtr(comm, win, &user), ncclSuccess);
    EXPECT("no user pointer", user == NULL);
  }
  EXPECT_RESULT(ncclCommWindowDeregister(comm, win), ncclSuccess);
  EXPECT_RESULT(ncclPutSignal(buffer, 1, ncclInt8, 0, win, 0, 0, 0, 0, comm, NULL),
                ncclInvalidArgument);
  EXPECT_RESULT(ncclSignal(0, 0, 0, 0, comm, NULL), ncclInvalidArgument); /* no host RMA */
  EXPECT_RESULT(ncclWaitSignal(1, &desc, comm, NULL), ncclInvalidArgument);
  EXPECT_RESULT(ncclGetLsaDevicePointer(win, 0, 0, &pointer), ncclInvalidArgument);
  EXPECT_RESULT(ncclGetPeerDevicePointer(win, 0, 0, &pointer), ncclInvalidArgument);
  EXPECT_RESULT(ncclGetLsaMultimemDevicePointer(win, 0, &pointer), ncclInvalidArgument);
  EXPECT("no device pointer", pointer == NULL);
  EXPECT_RESULT(ncclGinOutboxCreateRequirement(1, 12, NULL, NULL), ncclInvalidUsage);
}

/* A communicator of one rank made with a config of `size` bytes: 2.28's struct ends before
 * graphUsageMode, 2.30's before launchOrderImplicit (config_sizes_test.cc has every release's). */
static void checkConfigOfSize(size_t size) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  ncclUniqueId id;
  ncclComm_t comm = NULL;
  config.size = size;
  config.maxCTAs = 4; /* above NCCL_MIN_NCHANNELS=3 of the environment */
  EXPECT_RESULT(ncclGetUniqueId(&id), ncclSuccess);
  EXPECT_RESULT(ncclCommInitRankConfig(&comm, 1, id, 0, &config), ncclSuccess);
  if (comm != NULL) EXPECT_RESULT(ncclCommDestroy(comm), ncclSuccess);
}

int main(int argc, char** argv) {
  ncclUniqueId id, again;
  ncclComm_t comm = NULL, grown = NULL;
  struct NewRank newRank;
  pthread_t thread;
  int version = 0;

  onGpu = argc > 1 && strcmp(argv[1], "gpu") == 0;
  if (onGpu) {
    dev = braidGetDeviceApi();
    if (dev == NULL || dev->deviceCount() < 2) {
      printf("FAIL: the gpu mode needs two (emulated) GPUs: BRAID_EMULATE_GPUS=2\n");
      return 1;
    }
    dev->setDevice(0);
  }
  setenv("NCCL_MIN_NCHANNELS", "3", 1);
  setenv("NCCL_ALGO", "ring", 1);

  EXPECT_RESULT(ncclGetVersion(&version), ncclSuccess);
  /* The library (and header) is 2.32's now; it keeps every 2.30 answer. */
  EXPECT("the version is at least 2.30's",
         version == NCCL_VERSION_CODE && version >= NCCL_VERSION(2, 30, 0));
  EXPECT("ncclTimeout has its text", strstr(ncclGetErrorString(ncclTimeout), "timed out") != NULL);
  checkParameters();
  checkConfigOfSize(offsetof(ncclConfig_t, graphUsageMode));
  checkConfigOfSize(offsetof(ncclConfig_t, launchOrderImplicit));

  EXPECT_RESULT(ncclGetUniqueId(&id), ncclSuccess);
  EXPECT_RESULT(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess);
  if (comm == NULL) return 1;
  checkOneRank(comm);

  /* Grow the communicator of one rank to two: this thread is rank 0, a new one rank 1. */
  EXPECT_RESULT(ncclCommGetUniqueId(comm, &newRank.id), ncclSuccess);
  EXPECT_RESULT(ncclCommGetUniqueId(comm, &again), ncclInvalidUsage); /* one per grow */
  EXPECT_RESULT(ncclCommGrow(comm, 2, &newRank.id, 0, &grown, NULL), ncclInvalidArgument);
  pthread_create(&thread, NULL, joinGrow, &newRank);
  EXPECT_RESULT(ncclCommGrow(comm, 2, &newRank.id, -1, &grown, NULL), ncclSuccess);
  if (grown != NULL) {
    EXPECT_RESULT(sumOnes(grown, 16, 2.0f), ncclSuccess);
    checkSuspend(grown, 2);
  }
  pthread_join(thread, NULL);
  EXPECT_RESULT(newRank.made, ncclSuccess);
  EXPECT_RESULT(newRank.summed, ncclSuccess);
  EXPECT_RESULT(ncclCommGetUniqueId(comm, &again), ncclSuccess); /* the last one was used */
  if (grown != NULL) ncclCommDestroy(grown);
  if (newRank.made == ncclSuccess) ncclCommDestroy(newRank.comm);
  ncclCommDestroy(comm);

  if (failuresSoFar() != 0) {
    printf("%d check(s) failed\n", failuresSoFar());
    return 1;
  }
  printf("OK: every NCCL 2.29/2.30 function answered as expected (%s)\n",
         onGpu ? "emulated GPU" : "host communicator");
  return 0;
}
