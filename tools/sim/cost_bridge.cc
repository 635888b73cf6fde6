#include "cost_bridge.h"

#include <algorithm>

namespace braid::sim {

tune::Model costModelFor(const Machine& machine, int nchannels) {
  tune::Model model;
  const int nicsUsed = std::min(std::max(nchannels, 1), machine.nicsPerNode);
  for (int p = 0; p < algo::kNumProtocols; ++p) {
    const bool ll = static_cast<algo::Protocol>(p) == algo::Protocol::kLl;
    const double share = ll ? 0.5 : 1.0;
    const double nvlinkLat =
        ll && machine.nvlinkLatencyLlUs >= 0 ? machine.nvlinkLatencyLlUs : machine.nvlinkLatencyUs;
    const double netLat =
        ll && machine.netLatencyLlUs >= 0 ? machine.netLatencyLlUs : machine.netLatencyUs;
    // bytes/us are MB/s; the model counts GB/s.
    model.intraHost[p] = {nvlinkLat, machine.nvlinkBytesPerUs * share / 1e3};
    model.intraHostShared[p] = model.intraHost[p];
    model.interHost[p] = {netLat, nicsUsed * machine.netBytesPerUs * share / 1e3};
    model.channelGBs[p] = 0;
  }
  model.callUs = 0;
  model.hostCores = 0;
  model.channelsParallel = true;
  return model;
}

Result<double> predictUs(const Machine& machine, Collective collective, uint64_t bytes, int nranks,
                         int nchannels, algo::Algorithm algorithm, algo::Protocol protocol) {
  tune::Query q;
  q.collective = collective;
  q.bytes = bytes;
  q.nranks = nranks;
  q.nhosts = (nranks + machine.gpusPerNode - 1) / machine.gpusPerNode;
  q.nchannels = nchannels;
  return tune::predictUs(costModelFor(machine, nchannels), q, algorithm, protocol);
}

}  // namespace braid::sim
