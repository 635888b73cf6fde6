// Selector (selector.h): the choice of a call's algorithm and protocol.
#include "comm/selector.h"

namespace braid::comm {
namespace {

// What the selector's answer depends on in `call`: the size it is timed at
// (nccl-tests' size: the whole gathered or scattered buffer, from the
// largest block when the blocks vary) and whether only the ring can run it.
ChoiceKey choiceKey(const CollectiveCall& call, int nranks) {
  const bool gathers =
      call.collective == Collective::kAllGather || call.collective == Collective::kReduceScatter;
  size_t elems = call.count;
  if (call.blockCounts != nullptr) {
    elems = *std::max_element(call.blockCounts, call.blockCounts + nranks);
  }
  ChoiceKey key;
  key.collective = call.collective;
  key.bytes = elems * dataTypeSize(call.type) * (gathers ? nranks : 1);
  key.variableCounts = call.blockCounts != nullptr;
  return key;
}

// The channels a call with options spreads over, out of the communicator's `nchannels`: its
// bounds within them (a lower bound above the upper becomes 1, as NCCL resets minCTAs), then
// the fewest or the most they allow.
int tunedChannels(const CallTuning& t, int nchannels) {
  int lo = t.minChannels > 0 ? std::min(t.minChannels, nchannels) : 1;
  const int hi = t.maxChannels > 0 ? std::min(t.maxChannels, nchannels) : nchannels;
  if (lo > hi) lo = 1;
  return t.fewestChannels ? lo : hi;
}

}  // namespace

// A call with options of its own: its pairs narrow what the communicator allows (the
// environment's BRAID_ALGO / BRAID_PROTO still win, as NCCL's variables win over the call's) and
// its channels are the model's; the answer is not kept, since the cache keys calls by shape.
Result<tune::Choice> Selector::chooseTuned(const CollectiveCall& call, tune::Query q,
                                           tune::Allowed a) const {
  const CallTuning& t = call.tuning;
  q.nchannels = tunedChannels(t, settings_.nchannels);
  tune::Allowed narrowed = a;
  if (t.pairs != 0) narrowed.pairs &= t.pairs;
  BRAID_ASSIGN_OR_RETURN(tune::Choice choice, tune::choose(settings_.model, q, narrowed));
  if (t.pairs != 0 && choice.fellBack) {
    if (t.forcePairs) {
      return invalidArgument(std::string("the call's algSelection allows nothing that runs ") +
                             collectiveName(call.collective) +
                             " on this communicator (forceAlgSelection is 1)");
    }
    BRAID_ASSIGN_OR_RETURN(choice, tune::choose(settings_.model, q, a));
  }
  choice.channels = q.nchannels == settings_.nchannels ? 0 : q.nchannels;
  return choice;
}

Result<tune::Choice> Selector::choose(const CollectiveCall& call) {
  const SelectorSettings& s = settings_;
  const int nranks = s.nranks;
  const ChoiceKey key = choiceKey(call, nranks);
  const bool tuned = call.tuning.any();
  if (!tuned) {
    if (const tune::Choice* cached = choices_.find(key)) return *cached;
  }
  tune::Query q;
  q.collective = call.collective;
  q.bytes = key.bytes;
  q.nranks = nranks;
  q.nhosts = s.nhosts;
  q.nchannels = s.nchannels;
  q.deterministic = s.deterministic;
  tune::Allowed a = s.allowed;
  // Variable-count blocks have only ring schedules.
  if (key.variableCounts) {
    a.algorithm[static_cast<int>(algo::Algorithm::kTree)] = false;
    a.algorithm[static_cast<int>(algo::Algorithm::kOneShot)] = false;
  }
  if (!s.oneShotBoard) a.oneShotMaxBytes = 0;
  // Broadcast and reduce stay on the ring unless BRAID_ALGO asks for the
  // tree: the model times one call alone, but a chain's root returns once it
  // has sent, so calls issued back to back overlap along the chain and beat
  // the tree (braid-calibrate measured up to 2.9x at 2 ranks, 8 B).
  if (rooted(call.collective) && !s.algoForced) {
    a.algorithm[static_cast<int>(algo::Algorithm::kTree)] = false;
  }
  // The deterministic ring (owner computes, ways/deterministic_ring_way.cc) runs on
  // the host only; on a GPU the tree gives the reference order.
  if (s.onGpu && s.deterministic && call.collective == Collective::kAllReduce && nranks > 1) {
    a.algorithm[static_cast<int>(algo::Algorithm::kRing)] = false;
    a.algorithm[static_cast<int>(algo::Algorithm::kTree)] = true;
  }
  if (tuned) return chooseTuned(call, q, a);
  BRAID_ASSIGN_OR_RETURN(const tune::Choice choice, tune::choose(s.model, q, a));
  choices_.insert(key, choice);
  return choice;
}

}  // namespace braid::comm
