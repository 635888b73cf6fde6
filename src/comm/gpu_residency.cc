// GpuSide::chooseChannels (gpu_side.h): the device's size and the engine kernel's occupancy, the
// ranks that share the device, and the user's bounds, turned into channels by
// chooseGpuChannels (gpu_channels.h).
#include <sys/stat.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string>

#include "base/env.h"
#include "base/log.h"
#include "comm/gpu_channels.h"
#include "comm/gpu_side.h"
#include "kernels/engine_launch.h"

namespace braid::comm {
namespace {

// Engine blocks one multiprocessor holds at once: the fewest over every kernel, since any of
// them may be the one a launch runs (they differ in registers).
Result<int> engineBlocksPerSm(gpu::Runtime& rt) {
  int fewest = -1;
  for (int type = 0; type < kNumDataTypes; ++type) {
    for (int op = 0; op < kNumRedOps; ++op) {
      const kernels::EngineKernel k =
          kernels::engineKernelFor(static_cast<DataType>(type), static_cast<RedOp>(op));
      if (k.host == nullptr) continue;
      gpu::Launch launch;
      launch.deviceFunction = k.device;
      launch.hostFunction = k.host;
      launch.threadsPerBlock = kernels::engineThreadsPerBlock();
      BRAID_ASSIGN_OR_RETURN(const int blocks, rt.residentBlocksPerSm(launch));
      fewest = fewest < 0 ? blocks : std::min(fewest, blocks);
    }
  }
  if (fewest < 0) return internalError("no engine kernel to ask the occupancy of");
  return fewest;
}

// Whether an MPS control daemon listens (CUDA_MPS_PIPE_DIRECTORY, else its default place): its
// clients' kernels share the GPU at once instead of in turns.
bool mpsRunning() {
  const std::string dir = env::raw("CUDA_MPS_PIPE_DIRECTORY").value_or("/tmp/nvidia-mps");
  struct stat st {};
  return stat((dir + "/control").c_str(), &st) == 0;
}

}  // namespace

Status GpuSide::chooseChannels() {
  GpuChannelInputs in;
  BRAID_ASSIGN_OR_RETURN(const gpu::DeviceInfo info, runtime_->deviceInfo(device_));
  in.multiprocessors = info.multiprocessors;
  BRAID_ASSIGN_OR_RETURN(in.blocksPerSm, engineBlocksPerSm(*runtime_));
  // Ranks on this device: on this host, on the GPU of this PCI bus ID (what the peers told; not
  // their device numbers, which CUDA_VISIBLE_DEVICES makes 0 in every process it gives one GPU).
  in.ranksOnDevice = 0;
  std::set<int32_t> processes;
  for (int r = 0; r < members_.nranks; ++r) {
    if (!members_.shareGpu(r, members_.rank)) continue;
    ++in.ranksOnDevice;
    processes.insert(members_.peers()[r].pid);
  }
  const char* busId = members_.peers()[members_.rank].gpuBusId;
  in.forced = config_.nchannelsSet ? config_.nchannels : 0;
  in.minChannels = config_.minChannels;
  in.maxChannels = config_.maxChannels;
  Result<GpuChannelChoice> chosen = chooseGpuChannels(in);
  if (!chosen.ok()) {
    return chosen.status().withContext("rank " + std::to_string(members_.rank) + " on GPU " +
                                       std::to_string(device_) + " (" + busId + ")");
  }
  const GpuChannelChoice& choice = chosen.value();
  links_.useChannels(choice.channels);
  blockBudget_ = choice.blockBudget;
  BRAID_INFO(
      "gpu: %d channel(s) (%s); %d rank(s) on this device of %d multiprocessors x %d engine "
      "blocks; at most %d blocks a launch",
      choice.channels, choice.why.c_str(), in.ranksOnDevice, in.multiprocessors, in.blocksPerSm,
      choice.blockBudget);
  if (processes.size() > 1 && !mpsRunning()) {
    // Kernels of different processes take turns on a GPU without MPS: every step that waits for
    // a peer on the same GPU waits for a time slice. Said once per process.
    static std::once_flag said;
    std::call_once(said, [&] {
      BRAID_INFO(
          "gpu: ranks of %zu processes share GPU %d (%s) without MPS: correct, but their kernels "
          "run in turns and every step waits for a time slice; ranks as threads of one process "
          "(or MPS) run at once",
          processes.size(), device_, busId);
    });
  }
  return Status::success();
}

}  // namespace braid::comm
