/* A library that lies, preloaded under braid-perf by perf_lying_library.sh: its ncclAllReduce
 * makes every avg return the rank's own input, and every sum of doubles (how braid-perf adds up
 * its #wrong counts for the table) return zeros; any other call goes on to braid's. A verdict
 * that rests on the library under test passes under it; braid-perf's must not. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "nccl.h"

static size_t elementBytes(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    default:
      return 8;
  }
}

typedef ncclResult_t (*AllReduceFn)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                                    ncclComm_t, cudaStream_t);

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  if (op == ncclAvg) {
    memmove(recvbuff, sendbuff, count * elementBytes(datatype));
    return ncclSuccess;
  }
  if (op == ncclSum && datatype == ncclFloat64) {
    memset(recvbuff, 0, count * sizeof(double));
    return ncclSuccess;
  }
  AllReduceFn braids = (AllReduceFn)dlsym(RTLD_NEXT, "ncclAllReduce");
  return braids(sendbuff, recvbuff, count, datatype, op, comm, stream);
}
