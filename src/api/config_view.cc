// checkConfig and readConfig (config_view.h).
#include "api/config_view.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

namespace braid::api {

ncclConfig_t readConfig(const ncclConfig_t* config) {
  ncclConfig_t whole = NCCL_CONFIG_INITIALIZER;
  if (config == nullptr) return whole;
  memcpy(&whole, config, std::min(config->size, sizeof(ncclConfig_t)));
  whole.size = sizeof(ncclConfig_t);
  return whole;
}

int ctaBound(int field) { return field == NCCL_CONFIG_UNDEF_INT ? 0 : field; }

CommSettings CommSettings::of(const ncclConfig_t* config) {
  CommSettings s;
  if (config == nullptr) return s;
  const ncclConfig_t whole = readConfig(config);
  s.blocking = whole.blocking != 0;  // NCCL_CONFIG_UNDEF_INT: blocking, NCCL's default
  s.minChannels = ctaBound(whole.minCTAs);
  s.maxChannels = ctaBound(whole.maxCTAs);
  if (whole.commName != nullptr) s.name = whole.commName;  // NCCL_CONFIG_UNDEF_PTR is NULL
  return s;
}

Status checkConfig(const ncclConfig_t* config) {
  if (config == nullptr) return Status::success();
  if (config->magic != NCCL_API_MAGIC) {
    return invalidArgument(
        "ncclConfig_t was not initialized with NCCL_CONFIG_INITIALIZER (bad magic)");
  }
  // Every release's struct has `blocking`; nothing smaller was ever one.
  if (config->size < offsetof(ncclConfig_t, blocking) + sizeof(int)) {
    return invalidArgument("ncclConfig_t has an unexpected size " + std::to_string(config->size) +
                           " (smaller than any NCCL release's)");
  }
  const ncclConfig_t c = readConfig(config);
  if (c.blocking != NCCL_CONFIG_UNDEF_INT && c.blocking != 0 && c.blocking != 1) {
    return invalidArgument("ncclConfig_t.blocking must be 0 or 1");
  }
  for (const auto& [name, value] :
       {std::pair{"minCTAs", ctaBound(c.minCTAs)}, std::pair{"maxCTAs", ctaBound(c.maxCTAs)}}) {
    if (value < 0 || value > kMaxCtas) {
      return invalidArgument(std::string("ncclConfig_t.") + name + " must be between 1 and " +
                             std::to_string(kMaxCtas) + ", got " + std::to_string(value));
    }
  }
  return Status::success();
}

}  // namespace braid::api
