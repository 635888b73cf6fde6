/*
 * braid_ext.h: braid's extensions to the NCCL C API.
 *
 * NCCL has no collectives whose ranks contribute different amounts; programs emulate them with
 * padding or with groups of ncclSend / ncclRecv. braid offers them directly, with MPI's shape
 * (MPI_Allgatherv, MPI_Reduce_scatter, MPI_Alltoallv): per-rank counts and displacements, both in
 * elements of `datatype`. All-gather-v and reduce-scatter-v run braid's ring schedules with blocks
 * of unequal size (docs/variable_collectives.md); all-to-all-v is a batch of sends and receives.
 *
 * These functions exist only in braid's libnccl.so.2. A program that may run on NVIDIA's library
 * too can look them up with dlsym(RTLD_DEFAULT, "braidAllGatherV") and fall back when absent.
 *
 * Rules shared by all three, as for NCCL's collectives (nccl.h):
 *  - Every rank calls with the same datatype and, for all-gather-v and reduce-scatter-v, the same
 *    counts and displacements; a mismatch is an error that braid detects only when data moves
 *    (ncclInternalError or a timeout, as with mismatched counts of ncclAllGather).
 *  - Each array has one entry per rank of the communicator. The arrays are read during the call
 *    (inside ncclGroupStart / ncclGroupEnd, copied at the call), so they may be reused or freed
 *    as soon as it returns; the data buffers must stay valid until the operation completes.
 *  - A block of count 0 moves nothing; its displacement is not used and its buffer may be NULL
 *    when every block of that buffer is empty.
 *  - They may be issued inside a group and then run at ncclGroupEnd, in issue order with the
 *    communicator's other operations. A NULL array, a count that disagrees with this rank's
 *    entry, a NULL buffer, an unknown datatype or operator fail the call itself; overlapping
 *    blocks or buffers fail when the operation runs (inside a group: ncclGroupEnd). Either way
 *    the result is ncclInvalidArgument and ncclGetLastError names the problem.
 *
 * The header is valid C99 and C++.
 */
#ifndef BRAID_EXT_H_
#define BRAID_EXT_H_

#include "nccl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** braid's vendor id in ncclConfigExt_t (ncclCollConfig_t::ext): the bytes "brd", below 2^24 as
 *  NCCL asks of vendors. braid reads the options carrying it and ignores every other vendor's; it
 *  defines no option yet, so an option with this id is refused (ncclInvalidArgument). */
#define BRAID_CONFIG_EXT_VENDOR_ID 0x627264

/** Variable-count all-gather. Every rank r contributes recvcounts[r] elements; on every rank,
 *  rank r's contribution lands at recvbuff + displs[r] (elements). This rank sends `sendcount`
 *  elements from sendbuff, and sendcount must equal recvcounts[rank]. Blocks in recvbuff may lie
 *  in any order and with gaps between them (gaps are left untouched) but must not overlap. In
 *  place when sendbuff == recvbuff + displs[rank] elements; sendbuff must not otherwise overlap
 *  recvbuff. */
BRAID_NCCL_EXPORT ncclResult_t braidAllGatherV(const void* sendbuff, size_t sendcount,
                                               void* recvbuff, const size_t* recvcounts,
                                               const size_t* displs, ncclDataType_t datatype,
                                               ncclComm_t comm, cudaStream_t stream);

/** Variable-count reduce-scatter. sendbuff holds one block per rank: block r is sendcounts[r]
 *  elements at sendbuff + displs[r] (elements). Rank r receives in recvbuff the reduction with
 *  `op` over all ranks of their block r; recvcount must equal sendcounts[rank]. Blocks may lie in
 *  any order, with gaps. ncclAvg divides by the number of ranks, and operators made by
 *  ncclRedOpCreatePreMulSum work as with ncclReduceScatter. In place when
 *  recvbuff == sendbuff + displs[rank] elements (this rank's block must then not overlap another
 *  block); recvbuff must not otherwise overlap sendbuff. */
BRAID_NCCL_EXPORT ncclResult_t braidReduceScatterV(const void* sendbuff, const size_t* sendcounts,
                                                   const size_t* displs, void* recvbuff,
                                                   size_t recvcount, ncclDataType_t datatype,
                                                   ncclRedOp_t op, ncclComm_t comm,
                                                   cudaStream_t stream);

/** Variable-count all-to-all. This rank sends sendcounts[j] elements from sendbuff + sdispls[j]
 *  to rank j, and receives recvcounts[i] elements from rank i into recvbuff + rdispls[i]
 *  (elements). recvcounts[i] on this rank must equal sendcounts[this rank] on rank i. Receive
 *  blocks must not overlap each other, and sendbuff and recvbuff must not overlap: there is no
 *  in-place form. */
BRAID_NCCL_EXPORT ncclResult_t braidAlltoAllV(const void* sendbuff, const size_t* sendcounts,
                                              const size_t* sdispls, void* recvbuff,
                                              const size_t* recvcounts, const size_t* rdispls,
                                              ncclDataType_t datatype, ncclComm_t comm,
                                              cudaStream_t stream);

/** ncclCommInitRankConfig for a communicator on host memory: its buffers are the CPU's, whatever
 *  device is current and whether or not the machine has GPUs, as BRAID_HOST_COMM=1 makes every
 *  communicator of a process. Every rank of the communicator must be made this way. Its splits
 *  are on host memory too. Calls on it complete before they return (the stream is not used). */
BRAID_NCCL_EXPORT ncclResult_t braidCommInitRankHost(ncclComm_t* comm, int nranks,
                                                     ncclUniqueId commId, int rank,
                                                     ncclConfig_t* config);

/*
 * braid's seam to the CUDA runtime, as a table of functions. Every CUDA call braid makes goes
 * through one interface; this table is that interface for programs: the CUDA runtime braid runs
 * on, or, when the environment sets BRAID_EMULATE_GPUS=<n>, an emulated GPU of n devices (device
 * memory is host memory, a stream is an in-order queue run by a thread, a kernel launch runs the
 * CPU build of braid's kernels). A program that makes its buffers, streams and events through
 * the table runs unchanged on both; braid-perf and braid's emulated-GPU tests do.
 *
 * On the emulated GPU, memory from `alloc` is what GPU communicators take as device memory, and
 * its streams and events are the only ones its calls accept; the CUDA runtime's own functions
 * know nothing of them. Every function returns ncclSuccess or an error whose text
 * ncclGetLastError(NULL) gives.
 *
 * Fields are only ever appended, with a new version: a program checks that `version` is at
 * least the one it was built with. Version 2 added graph capture.
 */
#define BRAID_DEVICE_API_VERSION 2

typedef struct braidDeviceApi {
  int version;  /* BRAID_DEVICE_API_VERSION */
  int emulated; /* 1 on the emulated GPU, 0 on the CUDA runtime */
  /* The number of devices; 0 where there are none (never an error). */
  int (*deviceCount)(void);
  ncclResult_t (*setDevice)(int device);
  ncclResult_t (*getDevice)(int* device);
  /* "NVIDIA H200", "emulated GPU 0": at most bytes - 1 characters and a NUL. */
  ncclResult_t (*deviceName)(int device, char* name, size_t bytes);
  /* Device memory of the current device, and its release. */
  ncclResult_t (*alloc)(void** ptr, size_t bytes);
  ncclResult_t (*release)(void* ptr);
  /* An asynchronous copy in any direction, or memset, ordered on `stream` (NULL: the default). */
  ncclResult_t (*copy)(void* dst, const void* src, size_t bytes, cudaStream_t stream);
  ncclResult_t (*fill)(void* dst, int value, size_t bytes, cudaStream_t stream);
  /* Streams of the current device that do not synchronize with the default stream. */
  ncclResult_t (*streamCreate)(cudaStream_t* stream);
  ncclResult_t (*streamDestroy)(cudaStream_t stream);
  ncclResult_t (*streamSynchronize)(cudaStream_t stream);
  /* Events without timing: record marks the stream's end; waitEvent holds a stream until the
   * last record completes. */
  ncclResult_t (*eventCreate)(void** event);
  ncclResult_t (*eventDestroy)(void* event);
  ncclResult_t (*eventRecord)(void* event, cudaStream_t stream);
  ncclResult_t (*streamWaitEvent)(cudaStream_t stream, void* event);
  ncclResult_t (*eventSynchronize)(void* event);
  /* Runs fn(arg) on a host thread when the stream reaches this point (cudaLaunchHostFunc). */
  ncclResult_t (*hostCallback)(cudaStream_t stream, void (*fn)(void*), void* arg);
  /* Version 2: graph capture. mode is cudaStreamCaptureMode's value: 0 global, 1 thread-local,
   * 2 relaxed. endCapture instantiates what was captured; graphLaunch runs it on a stream. */
  ncclResult_t (*streamBeginCapture)(cudaStream_t stream, int mode);
  ncclResult_t (*streamEndCapture)(cudaStream_t stream, void** graph);
  ncclResult_t (*graphLaunch)(void* graph, cudaStream_t stream);
  ncclResult_t (*graphDestroy)(void* graph);
} braidDeviceApi;

/** The table of the process's runtime, chosen at the first call (or the first communicator). */
BRAID_NCCL_EXPORT const braidDeviceApi* braidGetDeviceApi(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BRAID_EXT_H_ */
