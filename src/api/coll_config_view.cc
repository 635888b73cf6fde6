// readCollConfig (coll_config_view.h).
#include "api/coll_config_view.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "api/config_view.h"
#include "base/log.h"
#include "braid_ext.h"
#include "tune/alg_selection.h"

namespace braid::api {
namespace {

/// 2.31's struct ends where 2.32 put launchCompletionEvent.
constexpr size_t kSizeOf2_31 = offsetof(ncclCollConfig_t, launchCompletionEvent);
/// More options than any real list holds: a longer walk is a loop.
constexpr int kMaxExtOptions = 4096;

// minCTAs or maxCTAs: 0 where unset or, as NCCL takes it, out of range (with a warning).
int channelBound(int value, const char* field) {
  if (value == NCCL_CONFIG_UNDEF_INT) return 0;
  if (value >= 1 && value <= kMaxCtas) return value;
  BRAID_WARN("ncclCollConfig_t.%s = %d is out of 1..%d and ignored, as NCCL ignores it", field,
             value, kMaxCtas);
  return 0;
}

// The vendor options: braid's own id has no options yet, every other vendor's is ignored.
Status checkExtensions(const ncclConfigExt_t* ext) {
  for (int n = 0; ext != nullptr; ext = ext->next, ++n) {
    if (n == kMaxExtOptions) {
      return invalidArgument("ncclCollConfig_t.ext has more than " +
                             std::to_string(kMaxExtOptions) + " options: does its list loop?");
    }
    if (ext->key.vendorId == BRAID_CONFIG_EXT_VENDOR_ID) {
      return invalidArgument("ncclCollConfig_t.ext: braid (vendor id " +
                             std::to_string(BRAID_CONFIG_EXT_VENDOR_ID) + ") has no option " +
                             std::to_string(ext->key.optionId));
    }
  }
  return Status::success();
}

// CTAPolicy: EFFICIENCY and ZERO both ask for the fewest channels (braid has no copy-engine
// collectives, NCCL's zero-CTA path, so ZERO runs as EFFICIENCY does).
Status applyCtaPolicy(int policy, CallTuning& tuning) {
  if (policy == NCCL_CONFIG_UNDEF_INT) return Status::success();
  if ((policy & ~(NCCL_CTA_POLICY_EFFICIENCY | NCCL_CTA_POLICY_ZERO)) != 0) {
    return invalidArgument("ncclCollConfig_t.CTAPolicy " + std::to_string(policy) +
                           " has bits no NCCL_CTA_POLICY_* flag has");
  }
  tuning.fewestChannels = policy != NCCL_CTA_POLICY_DEFAULT;
  return Status::success();
}

}  // namespace

Result<CallOptions> readCollConfig(const ncclCollConfig_t* config) {
  CallOptions options;
  if (config == nullptr) return options;
  if (config->magic != NCCL_API_MAGIC) {
    return invalidArgument(
        "ncclCollConfig_t was not initialized with NCCL_COLLCONFIG_INITIALIZER (bad magic)");
  }
  if (config->size < kSizeOf2_31) {
    return invalidArgument("ncclCollConfig_t has size " + std::to_string(config->size) +
                           ", smaller than any NCCL release's (" + std::to_string(kSizeOf2_31) +
                           ")");
  }
  ncclCollConfig_t c = NCCL_COLLCONFIG_INITIALIZER;
  memcpy(&c, config, std::min(config->size, sizeof(ncclCollConfig_t)));
  BRAID_TRY(checkExtensions(c.ext));
  BRAID_TRY(applyCtaPolicy(c.CTAPolicy, options.tuning));
  options.tuning.minChannels = channelBound(c.minCTAs, "minCTAs");
  options.tuning.maxChannels = channelBound(c.maxCTAs, "maxCTAs");
  options.tuning.forcePairs = c.forceAlgSelection != 0;
  if (c.algSelection != nullptr) {
    Result<uint32_t> pairs = tune::parseAlgSelection(c.algSelection);
    if (!pairs.ok() && options.tuning.forcePairs) return pairs.status();
    options.tuning.pairs = pairs.ok() ? pairs.value() : 0;
    options.selectsAlgorithm = options.tuning.pairs != 0;
  }
  options.launchEvent = c.launchCompletionEvent;
  return options;
}

}  // namespace braid::api
