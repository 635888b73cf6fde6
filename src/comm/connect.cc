// Connecting a communicator once its peers and ring order are known: the FIFOs' geometry, then
// either the ring's host FIFOs and the one-shot board (Links), or a GPU communicator's side
// (GpuSide), whose FIFOs all come with their first use. The selector learns what was made.
#include "base/log.h"
#include "comm/comm_impl.h"
#include "comm/tuner.h"

namespace braid {

Status Comm::Impl::connect() {
  links.configure(choosing.model);
  choosing.nchannels = links.nchannels();
  choosing.nhosts = members.hostCount();
  if (members.cudaDevice < 0) {
    fitNetwork();
    BRAID_TRY(links.connectRing(choosing));
  } else {
    BRAID_TRY(connectGpu());
  }
  selector = std::make_unique<comm::Selector>(
      choosing, comm::openTuner(config, members, network, choosing.model));
  calls.useSelector(*selector);
  return Status::success();
}

Status Comm::Impl::connectGpu() {
  if (!config.transportAllowed("cuda_ipc") && !config.transportAllowed("shm")) {
    return invalidUsage("BRAID_TRANSPORTS=" + config.transports +
                        " excludes both cuda_ipc and shm, the transports of GPUs on one host");
  }
  auto side = std::make_unique<comm::GpuSide>(config, members, health, recorder, links, network);
  gpuMemory = std::make_unique<gpu::MeteredRuntime>(gpu::runtime());
  BRAID_TRY(side->open(members.cudaDevice, *gpuMemory));
  // Ranks of this host whose sends PXN routes through this GPU ask from now on.
  std::vector<bool> reachesUs(members.nranks);
  for (int r = 0; r < members.nranks; ++r) {
    reachesUs[r] = side->placementFor(r) == transport::cuda_ipc::FifoPlacement::kDeviceMemory;
  }
  BRAID_TRY(network.serveRelays(gpu::runtime(), members.cudaDevice, std::move(reachesUs)));
  // A GPU rank's channels are blocks of its kernel: how many comes from the device.
  BRAID_TRY(side->chooseChannels());
  choosing.nchannels = links.nchannels();
  gpu = std::move(side);
  windows = std::make_unique<comm::Windows>(config, members, *gpu);
  calls.attachGpu(gpu.get());
  // The symmetric kernels' way finds the calls whose buffers lie in this rank's windows.
  calls.setWindowLookup(
      [registry = windows.get()](const void* p, size_t bytes) { return registry->find(p, bytes); });
  choosing.onGpu = true;
  BRAID_TRY(gpu->connect(choosing));  // the GPU's model from here on
  fitNetwork();
  return Status::success();
}

void Comm::Impl::fitNetwork() {
  // A network plugin carries the traffic by the devices it reports, not by the NICs the plan
  // took: its devices' speeds are the network's.
  const bool plugin = network.pluginNetworkGBs() > 0;
  const double gbs = plugin ? network.pluginNetworkGBs() : members.plannedNetworkGBs();
  if (!(gbs > 0)) return;
  choosing.model.fitNetwork(gbs);
  choosing.model.fitNetworkLatency(network.pluginLatencyUs());
  constexpr int kSimple = static_cast<int>(algo::Protocol::kSimple);
  if (members.rank == 0) {
    BRAID_INFO(
        "cost model: %s %.1f GB/s between hosts; the network hop taken as %.1f us, %.2f GB/s "
        "(Simple)",
        plugin ? "the NET plugin's devices move" : "the planned rings move", gbs,
        choosing.model.interHost[kSimple].latencyUs,
        choosing.model.interHost[kSimple].bandwidthGBs);
  }
}

}  // namespace braid
