// NCCL 2.30's ncclCommSuspend, ncclCommResume and ncclCommMemStats, as far as braid can honour
// them. NCCL_SUSPEND_MEM asks a communicator to give back its GPU memory: a host communicator
// holds none, so there it releases nothing and says so truthfully (0 bytes suspendable); a GPU
// communicator's FIFOs are mapped by its peers (cuda_ipc) and would have to be made and
// exchanged again, which braid does not do yet, so there it is refused with that reason.
// Between suspend and resume every call that uses the communicator fails (commFrom).
#include <cstdint>
#include <string>

#include "api/api_util.h"

using braid::api::commFrom;
using braid::api::report;

namespace {

constexpr const char* kGpuSuspendPlan =
    "braid cannot yet give back a GPU communicator's memory: its FIFOs are mapped by its peers "
    "and would have to be made and exchanged again (the communicator stays usable)";

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclCommSuspend, ncclComm_t comm, int flags) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if ((flags & ~NCCL_SUSPEND_MEM) != 0) {
    return report(braid::invalidArgument("ncclCommSuspend: unknown flags " + std::to_string(flags) +
                                         " (NCCL_SUSPEND_MEM is 1)"));
  }
  if ((flags & NCCL_SUSPEND_MEM) != 0 && c.value()->onGpu()) {
    return report(
        braid::invalidUsage(std::string("ncclCommSuspend(NCCL_SUSPEND_MEM): ") + kGpuSuspendPlan));
  }
  comm->suspended.store(true, std::memory_order_release);
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclCommResume, ncclComm_t comm) {
  auto c = commFrom(comm, /*evenSuspended=*/true);
  if (!c.ok()) return report(c.status());
  if (!comm->suspended.exchange(false, std::memory_order_acq_rel)) {
    return report(braid::invalidUsage("ncclCommResume: the communicator is not suspended"));
  }
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclCommMemStats, ncclComm_t comm, ncclCommMemStat_t stat,
               uint64_t* value) {
  auto c = commFrom(comm, /*evenSuspended=*/true);
  if (!c.ok()) return report(c.status());
  if (value == nullptr) return report(braid::invalidArgument("ncclCommMemStats: value is NULL"));
  const int which = static_cast<int>(stat);
  if (which < ncclStatGpuMemSuspend || which > ncclStatGpuMemTotal) {
    return report(
        braid::invalidArgument("ncclCommMemStats: unknown statistic " + std::to_string(which)));
  }
  if (which == ncclStatGpuMemSuspended) {
    *value = comm->suspended.load(std::memory_order_acquire) ? 1 : 0;
    return ncclSuccess;
  }
  if (c.value()->onGpu()) {
    return report(braid::invalidUsage(
        "ncclCommMemStats: braid does not count a GPU communicator's device memory yet"));
  }
  *value = 0;  // a host communicator holds no GPU memory
  return ncclSuccess;
}
