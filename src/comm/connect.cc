// Connecting a communicator once its peers and ring order are known: the FIFOs' geometry, then
// either the ring's host FIFOs and the one-shot board (Links), or a GPU communicator's side
// (GpuSide), whose FIFOs all come with their first use. The selector learns what was made.
#include "comm/comm_impl.h"

namespace braid {

Status Comm::Impl::connect() {
  links.configure(selector.model);
  selector.nchannels = links.nchannels;
  selector.nhosts = members.hostCount();
  if (members.cudaDevice < 0) return links.connectRing(selector);

  if (!config.transportAllowed("cuda_ipc") && !config.transportAllowed("shm")) {
    return invalidUsage("BRAID_TRANSPORTS=" + config.transports +
                        " excludes both cuda_ipc and shm, the transports of GPUs on one host");
  }
  auto side = std::make_unique<comm::GpuSide>(config, members, health, recorder, links, network);
  gpuMemory = std::make_unique<gpu::MeteredRuntime>(gpu::runtime());
  BRAID_TRY(side->open(members.cudaDevice, *gpuMemory));
  // A GPU rank's channels are blocks of its kernel: how many comes from the device.
  BRAID_TRY(side->chooseChannels());
  selector.nchannels = links.nchannels;
  gpu = std::move(side);
  calls.attachGpu(gpu.get());
  selector.onGpu = true;
  return gpu->connect(selector);
}

}  // namespace braid
