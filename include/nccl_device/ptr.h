/*
 * braid: where a window's memory is, for a kernel (and for host code that can read the window:
 * these compile for both). A window (ncclCommWindowRegister) is an ncclWindow_vidmem
 * (window_layout.h) that holds this rank's buffer and, for each rank of its load/store team,
 * where that rank's buffer is mapped here.
 *
 * Pointers into memory braid cannot give are NULL where NCCL's would be, and the multimem ones
 * stop the kernel: braid makes no devcomm with multimem, so a kernel that reaches them was
 * written for a devcomm braid refused.
 */
#ifndef BRAID_NCCL_DEVICE_PTR_H_
#define BRAID_NCCL_DEVICE_PTR_H_

#include "comm.h"
#include "window_layout.h"

#ifdef __cplusplus
/** This rank's buffer of `w`, `offset` bytes in. */
NCCL_HOST_DEVICE_INLINE void* ncclGetLocalPointer(ncclWindow_t w, size_t offset) {
  return w->localBase + offset;
}

/** LSA rank `peer`'s buffer of `w` as mapped here, `offset` bytes in. */
NCCL_HOST_DEVICE_INLINE void* ncclGetLsaPointer(ncclWindow_t w, size_t offset, int peer) {
  return w->lsaBases[peer] + offset;
}

/** World rank `peer`'s buffer of `w` as mapped here; NULL when `peer` is not of this LSA team. */
NCCL_HOST_DEVICE_INLINE void* ncclGetPeerPointer(ncclWindow_t w, size_t offset, int peer) {
  const int lsaPeer = peer - w->lsaFirstWorldRank;
  if (lsaPeer < 0 || lsaPeer >= w->lsaSize) return NULL;
  return ncclGetLsaPointer(w, offset, lsaPeer);
}

/** Team `team`'s rank `peer`'s buffer of `w`; NULL when it is not of this LSA team. */
NCCL_HOST_DEVICE_INLINE void* ncclGetPeerPointer(ncclWindow_t w, size_t offset, ncclTeam team,
                                                 int peer) {
  return ncclGetPeerPointer(w, offset, w->worldRank + (peer - team.rank) * team.stride);
}

/** Multimem: braid has none (ncclDevCommCreate refuses lsaMultimem), so this is never reached. */
NCCL_HOST_DEVICE_INLINE void* ncclGetMultimemPointer(ncclWindow_t w, size_t offset,
                                                     ncclMultimemHandle mmHandle) {
  (void)w, (void)offset, (void)mmHandle;
  nccl::braid_detail::unsupported();
  return NULL;
}
NCCL_HOST_DEVICE_INLINE void* ncclGetLsaMultimemPointer(ncclWindow_t w, size_t offset,
                                                        ncclDevComm const& comm) {
  return ncclGetMultimemPointer(w, offset, comm.lsaMultimem);
}
#endif /* __cplusplus */

#endif /* BRAID_NCCL_DEVICE_PTR_H_ */
