// Reading a caller's ncclCollConfig_t (the nccl*Config collectives, NCCL 2.31). Like
// ncclConfig_t it grows at its end, so the library checks the magic, then reads
// min(config->size, sizeof(ncclCollConfig_t)) bytes over NCCL_COLLCONFIG_INITIALIZER's values:
// a 2.31 caller's 64-byte struct has no launchCompletionEvent, which reads as NULL.
#pragma once

#include "braid/comm.h"
#include "braid/status.h"
#include "nccl.h"

namespace braid::api {

/// What braid applies of one call's ncclCollConfig_t.
struct CallOptions {
  CallTuning tuning;                  ///< channels and algorithm pairs (braid/comm.h)
  cudaEvent_t launchEvent = nullptr;  ///< launchCompletionEvent; NULL: none
  bool selectsAlgorithm = false;      ///< algSelection named algorithms (honoured or not)
};

/// The options of `config` (NULL: none). Errors: a struct not made with
/// NCCL_COLLCONFIG_INITIALIZER, one smaller than 2.31's, a CTAPolicy with unknown bits, an
/// algSelection braid cannot honour while forceAlgSelection is 1 (with 0 the call is left to the
/// communicator), an ext list that loops, or an ext option carrying braid's vendor id (braid
/// defines none yet). minCTAs / maxCTAs out of 1..64 are ignored with a warning, as NCCL ignores
/// them; nvlsCTAs, cgaClusterSize and userProfilerTag change nothing braid runs; other vendors'
/// ext options are ignored.
Result<CallOptions> readCollConfig(const ncclCollConfig_t* config);

}  // namespace braid::api
