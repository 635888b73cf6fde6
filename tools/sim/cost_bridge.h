// braid-sim's machine in the terms of the tuner's cost model (src/tune), so
// that the simulated time can be put beside the time the model predicts.
#pragma once

#include <cstdint>

#include "algo/algorithm.h"
#include "braid/status.h"
#include "braid/types.h"
#include "machine.h"
#include "tune/cost_model.h"

namespace braid::sim {

/// The model's figures for `machine` with `nchannels` channels: a hop inside
/// a node costs the NVLink latency and gets the GPU's NVLink port; a hop
/// between nodes the network latency and one NIC per channel (as machine.h
/// spreads channels over NICs), at most the node's NICs. LL halves both
/// bandwidths, as in the event simulation. GPU channels run in parallel.
tune::Model costModelFor(const Machine& machine, int nchannels);

/// The model's prediction for a call of `bytes` (nccl-tests' size) on the
/// first `nranks` GPUs of `machine`.
Result<double> predictUs(const Machine& machine, Collective collective, uint64_t bytes, int nranks,
                         int nchannels, algo::Algorithm algorithm, algo::Protocol protocol);

}  // namespace braid::sim
