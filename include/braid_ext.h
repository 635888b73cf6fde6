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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BRAID_EXT_H_ */
