// Choosing the algorithm and protocol of one call: the fastest the cost
// model predicts among those the user allows (BRAID_ALGO / BRAID_PROTO, or
// NCCL_ALGO / NCCL_PROTO) and the collective supports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "algo/algorithm.h"
#include "braid/status.h"
#include "tune/cost_model.h"

namespace braid::tune {

/// What the user lets the selector pick from.
struct Allowed {
  bool algorithm[algo::kNumAlgorithms] = {true, true, true};  ///< indexed by algo::Algorithm
  bool protocol[algo::kNumProtocols] = {true, true};          ///< indexed by algo::Protocol
  /// Largest all_reduce, in bytes, the one-shot implementation takes (its
  /// staging buffer); above it one-shot is not considered. 0: never one-shot.
  /// parseAllowed leaves it at 0: the communicator sets it.
  size_t oneShotMaxBytes = 0;
  /// The (algorithm, protocol) pairs allowed (pairBit): all of them but for a call whose own
  /// options narrow them (CallTuning::pairs).
  uint32_t pairs = ~0u;
};

/// The bit of (algorithm, protocol) in Allowed::pairs and CallTuning::pairs.
inline constexpr uint32_t pairBit(algo::Algorithm a, algo::Protocol p) {
  return 1u << (static_cast<int>(a) * algo::kNumProtocols + static_cast<int>(p));
}

/// The selector's answer.
struct Choice {
  algo::Algorithm algorithm = algo::Algorithm::kRing;
  algo::Protocol protocol = algo::Protocol::kSimple;
  double predictedUs = 0;  ///< the model's time for this choice
  /// No allowed algorithm can run this collective (BRAID_ALGO=tree and an
  /// all_gather, say), so the ring was taken anyway; worth an INFO line.
  bool fellBack = false;
  /// The channels the call's schedule spreads over when its options narrowed them; 0: all the
  /// communicator's.
  int channels = 0;
};

/// The fastest allowed (algorithm, protocol) that can run `query`; ties go
/// to the earlier enumerator (ring before tree, simple before ll). When no allowed algorithm
/// supports the collective, the ring, which runs every collective, is used with the fastest allowed
/// protocol (simple when none is allowed), as NCCL falls back to its ring. Errors: a malformed
/// query, or a model without figures for a candidate.
Result<Choice> choose(const Model& model, const Query& query, const Allowed& allowed);

/// Parses BRAID_ALGO and BRAID_PROTO (NCCL_ALGO / NCCL_PROTO) as NCCL reads
/// them: empty allows everything; a comma-separated list allows what it
/// names; a list after '^' allows everything but what it names. Names are
/// case-insensitive: ring, tree, oneshot; simple, ll. Names NCCL has and
/// braid does not (LL128, NVLS, NVLSTree, CollnetDirect, CollnetChain, PAT)
/// are refused in a list of allowed names, with a message saying so, and
/// ignored after '^', where excluding them is already true. Per-collective
/// lists ("allreduce:tree;...") are refused. A list that leaves nothing is
/// an error.
Result<Allowed> parseAllowed(const std::string& algorithms, const std::string& protocols);

/// "algorithms ring,tree protocols simple" for the INFO log.
std::string describeAllowed(const Allowed& allowed);

}  // namespace braid::tune
