// NCCL 2.30's ncclCommSuspend, ncclCommResume and ncclCommMemStats. NCCL_SUSPEND_MEM asks a
// communicator to give back its GPU memory: a GPU communicator frees its FIFOs, device
// programs, scratch and one-shot boards (Comm::suspendMemory; collective in braid, since its
// FIFOs are mapped by its peers), a host communicator holds none. Between suspend and resume
// every call that uses the communicator fails (commFrom). The memory figures are what the
// communicator's meter counts (gpu/metered_runtime.h).
#include <cstdint>
#include <string>

#include "api/api_util.h"

using braid::api::commFrom;
using braid::api::report;

BRAID_NCCL_API(ncclResult_t, ncclCommSuspend, ncclComm_t comm, int flags) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if ((flags & ~NCCL_SUSPEND_MEM) != 0) {
    return report(braid::invalidArgument("ncclCommSuspend: unknown flags " + std::to_string(flags) +
                                         " (NCCL_SUSPEND_MEM is 1)"));
  }
  if (comm->suspended.load(std::memory_order_acquire)) {
    return report(braid::invalidUsage("ncclCommSuspend: the communicator is suspended already"));
  }
  if ((flags & NCCL_SUSPEND_MEM) != 0) {
    const braid::Status s = c.value()->suspendMemory();
    if (!s.ok()) return report(s.withContext("ncclCommSuspend"));
  }
  comm->suspended.store(true, std::memory_order_release);
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclCommResume, ncclComm_t comm) {
  auto c = commFrom(comm, /*evenSuspended=*/true);
  if (!c.ok()) return report(c.status());
  if (!comm->suspended.load(std::memory_order_acquire)) {
    return report(braid::invalidUsage("ncclCommResume: the communicator is not suspended"));
  }
  const braid::Status s = c.value()->resumeMemory();
  if (!s.ok()) return report(s.withContext("ncclCommResume"));
  comm->suspended.store(false, std::memory_order_release);
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
  const braid::Comm::DeviceMemory m = c.value()->deviceMemory();
  switch (which) {
    case ncclStatGpuMemSuspended:
      *value = comm->suspended.load(std::memory_order_acquire) ? 1 : 0;
      break;
    case ncclStatGpuMemSuspend:
      *value = m.held - m.kept;
      break;
    case ncclStatGpuMemPersist:
      *value = m.kept;
      break;
    default:
      *value = m.held;
      break;
  }
  return ncclSuccess;
}
