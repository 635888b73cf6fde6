/*
 * braid: what an ncclWindow_t points to.
 *
 * ncclCommWindowRegister hands out a pointer to this struct in memory that both the host and the
 * registering rank's device read (device memory on a GPU; the emulated GPU's shared memory on
 * the CPU), so a user's kernel dereferences the window it was given, as with NVIDIA's library.
 * The layout is braid's own: programs built against braid's nccl_device.h read it through the
 * functions there (ncclGetLocalPointer, ncclGetLsaPointer, ncclGetPeerPointer), never directly.
 *
 * The load/store team (LSA) of a window is the ranks of the registering rank's host: a block of
 * consecutive world ranks (braid places a host's ranks together), every one reachable by peer
 * loads and stores. lsaBases holds, for each of them, where its buffer is mapped in this rank's
 * address space (this rank's own entry is localBase).
 */
#ifndef BRAID_NCCL_DEVICE_WINDOW_LAYOUT_H_
#define BRAID_NCCL_DEVICE_WINDOW_LAYOUT_H_

#include <stddef.h>
#include <stdint.h>

/** Marks a live window; deregistration clears it, so a stale handle is refused. */
#define BRAID_WINDOW_MAGIC 0x6e697762u /* "bwin" */

struct ncclWindow_vidmem {
  uint32_t magic;        /* BRAID_WINDOW_MAGIC while registered */
  int winFlags;          /* the flags given to ncclCommWindowRegister */
  int worldRank;         /* the registering rank */
  int worldSize;         /* ranks of its communicator */
  int lsaRank;           /* the registering rank's place in its load/store team */
  int lsaSize;           /* ranks in the team */
  int lsaFirstWorldRank; /* the world rank of the team's rank 0 */
  int reserved;          /* zero */
  size_t size;           /* bytes of this rank's buffer */
  char* localBase;       /* this rank's buffer (ncclWinGetUserPtr) */
  char* const* lsaBases; /* lsaSize entries, device-readable: team rank r's buffer, mapped here */
};

#endif /* BRAID_NCCL_DEVICE_WINDOW_LAYOUT_H_ */
