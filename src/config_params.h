// The knobs of Config as named parameters, for NCCL 2.30's parameter API (ncclParamBind and the
// rest, src/api/param_api.cc): each knob once, with the name a job script sets (NCCL_X where
// NCCL has the variable, BRAID_X where only braid does; the environment is read under either
// prefix either way), its type, and its value in a Config.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config.h"

namespace braid {

enum class ParamType { kInt32, kInt64, kString };

struct ConfigParam {
  const char* name;  ///< "NCCL_NCHANNELS", "BRAID_DETERMINISTIC"
  ParamType type;
  /// The value in `c`: integers in `number`, strings in `text`.
  int64_t (*number)(const Config& c);
  std::string (*text)(const Config& c);
};

/// Every parameter, in a fixed order; the entries live as long as the process.
const std::vector<ConfigParam>& configParams();

/// The parameter called `key`: its NCCL_ or BRAID_ name, either prefix, or none
/// ("NCHANNELS"); null when braid has no such knob.
const ConfigParam* findConfigParam(const std::string& key);

/// A parameter's value in `c` as text (integers in decimal).
std::string configParamText(const ConfigParam& p, const Config& c);

}  // namespace braid
