// Drawing the soak's steps (plan.h).
#include "soak/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace braid::soak {
namespace {

using matrix::Rng;

const char* const kNames[kNumCollectives] = {
    "all_reduce",  "reduce_scatter",  "all_gather", "broadcast", "bcast",
    "reduce",      "sendrecv",        "gather",     "scatter",   "alltoall",
    "all_gatherv", "reduce_scatterv", "alltoallv"};

// All-reduce is what programs call most, so it is drawn three times as often as each other one.
const int kWeights[kNumCollectives] = {3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

const ncclDataType_t kTypes[] = {ncclInt8,    ncclUint8,    ncclInt32,      ncclUint32,
                                 ncclInt64,   ncclUint64,   ncclFloat16,    ncclFloat32,
                                 ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};

Collective drawCollective(Rng& rng) {
  int total = 0;
  for (int w : kWeights) total += w;
  int pick = static_cast<int>(rng() % static_cast<uint64_t>(total));
  for (int c = 0; c < kNumCollectives; ++c) {
    if (pick < kWeights[c]) return static_cast<Collective>(c);
    pick -= kWeights[c];
  }
  return fromMatrix(matrix::Coll::kAllReduce);
}

/// How many times the count the largest buffer of one rank holds: nranks for the collectives
/// whose input (matrix::inputElems) or output is one block per rank.
size_t widening(matrix::Coll c, int nranks) {
  const bool wideOutput =
      c == matrix::Coll::kAllGather || c == matrix::Coll::kGather || c == matrix::Coll::kAlltoAll;
  return wideOutput ? static_cast<size_t>(nranks) : matrix::inputElems(c, 1, nranks);
}

/// A count in [0, most], log-uniform, often an awkward one: a power of two, one off it, or a
/// few off a random value; zero one time in sixteen.
size_t drawCount(Rng& rng, size_t most) {
  if (most == 0 || rng() % 16 == 0) return 0;
  const double e = matrix::uniform01(rng) * std::log2(static_cast<double>(most) + 1);
  const size_t base = static_cast<size_t>(std::exp2(e));
  const size_t power = size_t{1} << static_cast<int>(e);
  size_t count = base;
  switch (rng() % 4) {
    case 0:
      break;
    case 1:
      count = power;
      break;
    case 2:
      count = rng() % 2 ? power + 1 : power - 1;
      break;
    default:
      count = base + rng() % 7;
      count = count > 3 ? count - 3 : 1;
      break;
  }
  return std::clamp<size_t>(count, 1, most);
}

PlannedCall drawCall(const PlanSpace& space, Rng& rng, int index) {
  PlannedCall call;
  call.index = index;
  call.flavour = static_cast<int>(rng() % static_cast<uint64_t>(space.nflavours));
  call.coll = drawCollective(rng);
  call.type = kTypes[rng() % (sizeof kTypes / sizeof kTypes[0])];
  call.op = matrix::kAllOps[rng() % (sizeof matrix::kAllOps / sizeof matrix::kAllOps[0])];
  if (!collectiveReduces(call.coll)) call.op = matrix::Op::kSum;
  call.root = static_cast<int>(rng() % static_cast<uint64_t>(space.nranks));
  if (!collectiveRooted(call.coll)) call.root = 0;
  const Collective c = call.coll;
  // NCCL has no in-place all-to-all or send/receive and no out-of-place ncclBcast;
  // all-to-all-v has no in-place form either (braid_ext.h).
  const bool v = isVariable(c);
  const bool inPlace = v ? c != Collective::kAlltoAllV : matrix::hasInPlace(toMatrix(c));
  const bool outOfPlace = v || matrix::hasOutOfPlace(toMatrix(c));
  call.inPlace = inPlace && (!outOfPlace || rng() % 2 == 0);
  const size_t elem = matrix::typeInfo(call.type).bytes;
  const size_t elems = space.maxBytes / elem;
  size_t most = 0;
  if (v) {
    // A v-collective's buffer holds up to nranks blocks with gaps of up to 8 elements.
    const size_t perBlock = elems / static_cast<size_t>(space.nranks);
    most = perBlock > 9 ? perBlock - 9 : 0;
  } else {
    most = elems / widening(toMatrix(c), space.nranks);
  }
  call.count = drawCount(rng, most);
  call.seed = rng();
  return call;
}

}  // namespace

const char* collectiveName(Collective c) { return kNames[static_cast<int>(c)]; }

bool isVariable(Collective c) { return static_cast<int>(c) >= kNumMatrixCollectives; }

bool collectiveReduces(Collective c) {
  return isVariable(c) ? c == Collective::kReduceScatterV : matrix::reduces(toMatrix(c));
}

bool collectiveRooted(Collective c) { return !isVariable(c) && matrix::rooted(toMatrix(c)); }

Step planStep(const PlanSpace& space, uint64_t seed, uint64_t number) {
  Rng rng(matrix::mixSeed(seed, number));
  Step step;
  step.number = number;
  step.grouped = space.maxGroup >= 2 && rng() % 5 == 0;
  const int calls = step.grouped ? 2 + static_cast<int>(rng() % (space.maxGroup - 1)) : 1;
  for (int i = 0; i < calls; ++i) step.calls.push_back(drawCall(space, rng, i));
  return step;
}

std::string describeCall(uint64_t step, const PlannedCall& call) {
  char text[200];
  const bool reduces = collectiveReduces(call.coll);
  snprintf(text, sizeof text, "step %llu.%d %s %s%s%s count=%zu %s", (unsigned long long)step,
           call.index, collectiveName(call.coll), matrix::typeInfo(call.type).name,
           reduces ? " " : "", reduces ? matrix::opName(call.op) : "", call.count,
           call.inPlace ? "in-place" : "out-of-place");
  std::string s = text;
  if (collectiveRooted(call.coll)) {
    const bool shift = call.coll == fromMatrix(matrix::Coll::kSendRecv);
    s += (shift ? " shift=" : " root=") + std::to_string(call.root);
  }
  return s;
}

bool parseCollectives(const std::string& list, uint32_t* mask, std::string* error) {
  *mask = 0;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string name = list.substr(start, comma - start);
    int found = -1;
    for (int c = 0; c < kNumCollectives; ++c) {
      if (name == kNames[c]) found = c;
    }
    if (found < 0) {
      *error = "unknown collective '" + name + "'";
      return false;
    }
    *mask |= uint32_t{1} << found;
    start = comma + 1;
  }
  return true;
}

}  // namespace braid::soak
