// Giving back a GPU communicator's device memory and taking it again (Comm::suspendMemory,
// resumeMemory; ncclCommSuspend and ncclCommResume).
//
// Its FIFOs live in one rank's memory and are mapped by its peers, so the suspend is collective:
// every rank waits for its own kernels, then all meet (no kernel anywhere still reads or writes
// a FIFO), free what they hold, and meet again (no rank makes a new FIFO under an old one's
// name while a peer still has it). The FIFOs come back as at creation, with the first call that
// needs each; the resume makes the one-shot boards again, as the connection did. What stays:
// the stream, the cursors' memory, the abort, fault and wait words, the meter.
#include "base/log.h"
#include "comm/comm_impl.h"

namespace braid {

Status Comm::suspendMemory() {
  Impl& c = *impl_;
  const gpu::DeviceGuard keep = c.keepCallersDevice();
  comm::ActiveCall active = c.health.countCall();
  log::ScopedLogRank logRank(c.members.rank);
  if (!c.gpu) return Status::success();  // host memory: no device memory to give back
  if (c.members.spansHosts()) {
    return invalidUsage(
        "suspend: a GPU communicator across hosts keeps its memory (its FIFOs to other hosts "
        "are bridged by proxies braid does not make again yet)");
  }
  const uint64_t before = c.gpuMemory->deviceBytes();
  BRAID_TRY(c.gpu->flush());
  BRAID_TRY(c.gpu->waitForLaunches().withContext("suspend: waiting for this rank's kernels"));
  BRAID_TRY(c.members.bootstrap()->barrier().withContext("suspend: waiting for every rank"));
  c.calls.dropSchedules();
  c.selector->disableOneShot();
  BRAID_TRY(c.gpu->releaseMemory());
  BRAID_TRY(c.members.bootstrap()->barrier().withContext("suspend: waiting for every rank"));
  BRAID_INFO("suspend: gave back %llu of %llu bytes of device memory",
             static_cast<unsigned long long>(before - c.gpuMemory->deviceBytes()),
             static_cast<unsigned long long>(before));
  return Status::success();
}

Status Comm::resumeMemory() {
  Impl& c = *impl_;
  const gpu::DeviceGuard keep = c.keepCallersDevice();
  comm::ActiveCall active = c.health.countCall();
  log::ScopedLogRank logRank(c.members.rank);
  // Only what the suspend gave back is made again (GpuSide::restoreMemory): a suspend without
  // NCCL_SUSPEND_MEM freed nothing, and its FIFOs, their cursors and boards are still in use.
  if (!c.gpu) return Status::success();
  BRAID_TRY(c.gpu->restoreMemory(*c.selector).withContext("resume"));
  c.selector->forgetChoices();
  return Status::success();
}

Comm::DeviceMemory Comm::deviceMemory() const {
  DeviceMemory m;
  if (!impl_->gpu) return m;
  m.held = impl_->gpuMemory->deviceBytes();
  m.kept = impl_->gpu->keptBytes();
  return m;
}

}  // namespace braid
