// The soak's random plan: what every rank runs at each step, drawn from the run's seed and the
// step's number alone, so that every rank (each a process with no other channel to its peers)
// draws the same calls in the same order, and any step can be drawn again on its own
// (--first N --steps 1) to repeat it.
//
// A step is one call, or with probability 1/5 a group of 2 .. maxGroup calls between
// ncclGroupStart and ncclGroupEnd, each on a communicator drawn from the run's set (the
// "flavours" of comms.h: algorithm, protocol, channels, host or GPU). Each call draws its
// collective, datatype, operator, count, root (send/recv: the shift) and placement; the seed of
// its inputs and layout is drawn too, so inputs are a function of (run seed, step, call, rank,
// index).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "api/matrix_cases.h"
#include "nccl.h"

namespace braid::soak {

/// The collective matrix's cases and references (tests/api), which the soak's calls reuse.
namespace matrix = ::braid::testing::matrix;

/// Collectives below this value are matrix::Coll's, which CaseRun runs.
inline constexpr int kNumMatrixCollectives = 10;
inline constexpr int kNumCollectives = kNumMatrixCollectives + 3;

/// A collective the soak draws: one of the collective matrix's ten, with matrix::Coll's value,
/// or one of braid's variable-count ones (braid_ext.h), numbered after them.
enum class Collective : int {
  kAllGatherV = kNumMatrixCollectives,
  kReduceScatterV,
  kAlltoAllV,
};

inline Collective fromMatrix(matrix::Coll c) { return static_cast<Collective>(c); }
/// Only for the collectives that are not variable.
inline matrix::Coll toMatrix(Collective c) { return static_cast<matrix::Coll>(c); }

/// "all_reduce", "reduce_scatterv", ...: braid-perf's names.
const char* collectiveName(Collective c);
bool isVariable(Collective c);
bool collectiveReduces(Collective c);
bool collectiveRooted(Collective c);

/// One call of a step.
struct PlannedCall {
  Collective coll = fromMatrix(matrix::Coll::kAllReduce);
  ncclDataType_t type = ncclFloat32;
  matrix::Op op = matrix::Op::kSum;  ///< only for the collectives that reduce
  /// Elements per rank block for the fixed-size collectives (NCCL's count); for the v ones the
  /// largest block a rank may contribute (blocks are drawn in [0, count]).
  size_t count = 0;
  int root = 0;  ///< rooted collectives; send/recv: rank r sends to r + root
  bool inPlace = false;
  int flavour = 0;    ///< index into the run's communicators
  uint64_t seed = 0;  ///< of the call's inputs and layout
  int index = 0;      ///< its place in the step
};

struct Step {
  uint64_t number = 0;
  bool grouped = false;
  std::vector<PlannedCall> calls;
};

/// What the plan draws from.
struct PlanSpace {
  int nranks = 4;
  int nflavours = 1;
  size_t maxBytes = 4 << 20;  ///< the largest buffer one call passes, per rank
  int maxGroup = 4;           ///< calls in a group at most (2 or more)
};

/// Step `number` of the run with seed `seed`.
Step planStep(const PlanSpace& space, uint64_t seed, uint64_t number);

/// "step 17.1 reduce_scatter float16 avg count=1001 in-place root=2": enough to find the call.
std::string describeCall(uint64_t step, const PlannedCall& call);

/// Parses a comma-separated list of collective names into a mask of kNumCollectives bits; an
/// unknown name is an error naming it.
bool parseCollectives(const std::string& list, uint32_t* mask, std::string* error);

}  // namespace braid::soak
