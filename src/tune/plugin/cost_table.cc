#include "tune/plugin/cost_table.h"

#include <algorithm>
#include <cstring>

namespace braid::tune {
namespace {

using namespace braid::tunerabi;  // NOLINT(google-build-using-namespace): the ABI's names

// braid's algorithms that have a row in NCCL's table, and the row.
constexpr struct {
  algo::Algorithm algorithm;
  int row;
} kTabled[] = {{algo::Algorithm::kRing, NCCL_ALGO_RING}, {algo::Algorithm::kTree, NCCL_ALGO_TREE}};

bool sameTable(const CostTable& a, const CostTable& b) {
  return std::memcmp(a.us, b.us, sizeof(a.us)) == 0;
}

}  // namespace

int ncclAlgorithmIndex(algo::Algorithm algorithm) {
  switch (algorithm) {
    case algo::Algorithm::kRing:
      return NCCL_ALGO_RING;
    case algo::Algorithm::kTree:
      return NCCL_ALGO_TREE;
    default:
      return -1;
  }
}

int ncclProtocolIndex(algo::Protocol protocol) {
  return protocol == algo::Protocol::kLl ? NCCL_PROTO_LL : NCCL_PROTO_SIMPLE;
}

ncclFunc_t ncclFunc(Collective collective) {
  switch (collective) {
    case Collective::kAllReduce:
      return ncclFuncAllReduce;
    case Collective::kReduceScatter:
      return ncclFuncReduceScatter;
    case Collective::kAllGather:
      return ncclFuncAllGather;
    case Collective::kBroadcast:
      return ncclFuncBroadcast;
    case Collective::kReduce:
      return ncclFuncReduce;
  }
  return ncclFuncAllReduce;
}

CostTable ignoredTable() {
  CostTable t;
  std::fill(&t.us[0][0], &t.us[0][0] + NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS,
            NCCL_ALGO_PROTO_IGNORE);
  return t;
}

Result<CostTable> modelTable(const Model& model, const Query& query, const Allowed& allowed) {
  CostTable t = ignoredTable();
  for (const auto& [algorithm, row] : kTabled) {
    if (!allowed.algorithm[static_cast<int>(algorithm)] || !supports(algorithm, query)) continue;
    for (int p = 0; p < algo::kNumProtocols; ++p) {
      if (!allowed.protocol[p]) continue;
      const auto protocol = static_cast<algo::Protocol>(p);
      BRAID_ASSIGN_OR_RETURN(const double us, predictUs(model, query, algorithm, protocol));
      t.us[row][ncclProtocolIndex(protocol)] = static_cast<float>(us);
    }
  }
  return t;
}

std::optional<Choice> tunedChoice(const Choice& ours, const CostTable& offered,
                                  const CostTable& answered, int nChannels, int maxChannels) {
  Choice tuned = ours;
  tuned.pluginAsked = true;
  if (!sameTable(offered, answered)) {
    bool found = false;
    float best = 0;
    for (const auto& [algorithm, a] : kTabled) {
      for (int p = 0; p < algo::kNumProtocols; ++p) {
        const auto protocol = static_cast<algo::Protocol>(p);
        const int q = ncclProtocolIndex(protocol);
        const float cost = answered.us[a][q];
        // Only what braid offered runs; a negative cost is ignored, as NCCL ignores it.
        if (offered.us[a][q] == NCCL_ALGO_PROTO_IGNORE || !(cost >= 0)) continue;
        if (found && !(cost < best)) continue;
        found = true;
        best = cost;
        tuned.algorithm = algorithm;
        tuned.protocol = protocol;
        tuned.predictedUs = offered.us[a][q];
      }
    }
    if (!found) return std::nullopt;
    tuned.fellBack = false;
    tuned.pluginDecided = true;
  }
  if (nChannels > 0) {
    tuned.nchannels = std::clamp(nChannels, 1, std::max(maxChannels, 1));
    tuned.pluginDecided = true;
  }
  return tuned;
}

ncclTunerConstants_v5_t modelConstants(const Model& model) {
  ncclTunerConstants_v5_t c{};
  for (const auto& [algorithm, a] : kTabled) {
    for (int p = 0; p < algo::kNumProtocols; ++p) {
      const int q = ncclProtocolIndex(static_cast<algo::Protocol>(p));
      const double scale = algorithm == algo::Algorithm::kTree ? model.tree[p].latency : 1.0;
      c.baseLatencies[a][q] = model.callUs;
      c.hwLatencies[NCCL_HW_PCI][a][q] = model.intraHost[p].latencyUs * scale;
      c.hwLatencies[NCCL_HW_NET][a][q] = model.interHost[p].latencyUs * scale;
    }
  }
  return c;
}

}  // namespace braid::tune
