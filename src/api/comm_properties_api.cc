// ncclCommQueryProperties (nccl_device/core.h): what a communicator supports, answered truthfully.
// ncclCommProperties_t is versioned like ncclConfig_t: read and written up to the caller's
// `size`. braid gives device communicators where every rank shares one host and its GPUs reach
// each other (deviceApiSupport); it has no multimem, no GIN and no host RMA.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "api/api_util.h"
#include "nccl_device.h"

using braid::api::commFrom;
using braid::api::report;

BRAID_NCCL_API(ncclResult_t, ncclCommQueryProperties, ncclComm_t comm,
               ncclCommProperties_t* props) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (props == nullptr) return report(braid::invalidArgument("ncclCommQueryProperties: NULL"));
  if (props->magic != NCCL_API_MAGIC) {
    return report(
        braid::invalidArgument("ncclCommQueryProperties: props was not initialized with "
                               "NCCL_COMM_PROPERTIES_INITIALIZER (bad magic)"));
  }
  if (props->size < offsetof(ncclCommProperties_t, rank)) {
    return report(braid::invalidArgument("ncclCommQueryProperties: props has an unexpected size " +
                                         std::to_string(props->size)));
  }
  const braid::Comm& k = *c.value();
  ncclCommProperties_t p;
  memset(&p, 0, sizeof p);
  p.size = props->size;
  p.magic = props->magic;
  p.version = props->version;
  p.rank = k.rank();
  p.nRanks = k.size();
  p.cudaDev = k.cudaDevice();
  p.nvmlDev = -1;  // braid does not use NVML: unknown
  p.deviceApiSupport = k.canShareAcrossHost();
  p.multimemSupport = false;
  p.ginType = NCCL_GIN_TYPE_NONE;
  // One load/store team per host: the ranks of a host's block (ncclTeamLsa).
  p.nLsaTeams = k.size() / std::max(1, k.hostBlock().second);
  p.hostRmaSupport = false;
  p.railedGinType = NCCL_GIN_TYPE_NONE;
  memcpy(props, &p, std::min(props->size, sizeof p));
  return ncclSuccess;
}
