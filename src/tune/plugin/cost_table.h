// The cost table a tuner plugin sees and rewrites, and the choice braid reads back from it.
//
// NCCL fills a table of [algorithm][protocol] times for each call, marks what it will not run
// NCCL_ALGO_PROTO_IGNORE, lets the plugin rewrite it and runs the cheapest entry left. braid does
// the same with its own model's predictions in the entries it can run: NCCL's ring and tree rows,
// Simple and LL columns, where BRAID_ALGO / BRAID_PROTO and the collective allow them (what braid's
// own selector weighs, select.h). LL128, NVLS, NVLSTree, CollNet and PAT stay ignored: braid has
// none of them, and an entry the plugin sets there is not taken. The one-shot all-reduce has no
// row in NCCL's table: braid's own choice, one-shot included, stands where the plugin leaves the
// table as it was.
#pragma once

#include <cstdint>
#include <optional>

#include "algo/algorithm.h"
#include "braid/status.h"
#include "braid/types.h"
#include "tune/cost_model.h"
#include "tune/plugin/tuner_abi.h"
#include "tune/plugin/tuner_plugin.h"
#include "tune/select.h"

namespace braid::tune {

/// NCCL's row of braid's algorithm; -1 where NCCL has none (the one-shot).
int ncclAlgorithmIndex(algo::Algorithm algorithm);
/// NCCL's column of braid's protocol.
int ncclProtocolIndex(algo::Protocol protocol);
/// The ncclFunc_t of a collective braid asks tuners about.
tunerabi::ncclFunc_t ncclFunc(Collective collective);

/// Every entry ignored.
CostTable ignoredTable();

/// The table of `query`: the model's microseconds for each (ring or tree, Simple or LL) that
/// `allowed` allows and the collective supports, ignored elsewhere.
Result<CostTable> modelTable(const Model& model, const Query& query, const Allowed& allowed);

/// What a plugin's answer makes of braid's choice `ours`, given the table braid offered
/// (`offered`), the table the plugin gave back (`answered`) and the channel count it set
/// (`nChannels`, 0 = none) within [1, `maxChannels`]. A table given back unchanged keeps `ours`;
/// otherwise its cheapest non-negative entry among those braid offered decides, timed at braid's
/// prediction. Empty when the plugin left no entry braid offered (the caller keeps `ours`).
std::optional<Choice> tunedChoice(const Choice& ours, const CostTable& offered,
                                  const CostTable& answered, int nChannels, int maxChannels);

/// The constants a v5/v6 tuner's init sees: braid's model's latencies where NCCL's have a
/// counterpart (the base latency of a call, a hop inside a host as PCI, between hosts as NET, for
/// the ring and the tree, Simple and LL), zero elsewhere. braid's model does not read them back.
tunerabi::ncclTunerConstants_v5_t modelConstants(const Model& model);

}  // namespace braid::tune
