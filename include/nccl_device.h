/*
 * braid: NCCL's device API (nccl_device.h), the part braid provides.
 *
 * Host code makes a device communicator (ncclDevCommCreate) of a GPU communicator whose ranks
 * share a host, and passes it by value to its kernels; the kernels reach the ranks' memory of a
 * symmetric window through ncclGetLsaPointer and its neighbours and synchronize through LSA
 * barriers. Multimem and GPU-initiated networking are declared so that programs written for
 * them compile; braid refuses the devcomms that ask for them, saying why. The list of what is
 * given and what is declined is in docs/device-api.md.
 *
 * Written for braid from NCCL 2.30.7's documented names, values and versioned struct layouts;
 * include it after or instead of nccl.h (it includes braid's nccl.h itself).
 */
#ifndef BRAID_NCCL_DEVICE_H_
#define BRAID_NCCL_DEVICE_H_

#include "nccl_device/barrier.h"
#include "nccl_device/comm.h"
#include "nccl_device/coop.h"
#include "nccl_device/core.h"
#include "nccl_device/gin.h"
#include "nccl_device/lsa_barrier.h"
#include "nccl_device/ptr.h"
#include "nccl_device/utility.h"
#include "nccl_device/window_layout.h"

#endif /* BRAID_NCCL_DEVICE_H_ */
