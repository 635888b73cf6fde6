// Selector (selector.h): the choice of a call's algorithm and protocol.
#include "comm/selector.h"

namespace braid::comm {
namespace {

// What the selector's answer depends on in `call`: the size it is timed at and whether only the
// ring can run it.
ChoiceKey choiceKey(const CollectiveCall& call, int nranks) {
  ChoiceKey key;
  key.collective = call.collective;
  key.bytes = timedBytes(call, nranks);
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

size_t timedBytes(const CollectiveCall& call, int nranks) {
  const bool gathers =
      call.collective == Collective::kAllGather || call.collective == Collective::kReduceScatter;
  size_t elems = call.count;
  if (call.blockCounts != nullptr) {
    elems = *std::max_element(call.blockCounts, call.blockCounts + nranks);
  }
  return elems * dataTypeSize(call.type) * (gathers ? nranks : 1);
}

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
  choice.nchannels = q.nchannels == settings_.nchannels ? 0 : q.nchannels;
  return choice;
}

Result<tune::Choice> Selector::choose(const CollectiveCall& call) {
  const ChoiceKey key = choiceKey(call, settings_.nranks);
  if (call.tuning.any()) {
    // A call with options of its own: its answer is not kept (the cache keys calls by shape)
    // and a tuner plugin is not asked (the options are the caller's tuning).
    tune::Query q;
    tune::Allowed a;
    queryFor(key, &q, &a);
    return chooseTuned(call, q, a);
  }
  const CachedChoice* answer = choices_.find(key);
  if (answer == nullptr) {
    BRAID_ASSIGN_OR_RETURN(answer, modelAnswer(key));
  }
  if (!tuner_ || key.variableCounts) return static_cast<const tune::Choice&>(*answer);
  return tuner_->decide(key.collective, key.bytes, answer->offered, *answer, settings_.nchannels);
}

void Selector::queryFor(const ChoiceKey& key, tune::Query* query, tune::Allowed* allowed) const {
  const SelectorSettings& s = settings_;
  const int nranks = s.nranks;
  tune::Query& q = *query;
  q.collective = key.collective;
  q.bytes = key.bytes;
  q.nranks = nranks;
  q.nhosts = s.nhosts;
  q.nchannels = s.nchannels;
  q.deterministic = s.deterministic;
  tune::Allowed& a = *allowed;
  a = s.allowed;
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
  if (rooted(key.collective) && !s.algoForced) {
    a.algorithm[static_cast<int>(algo::Algorithm::kTree)] = false;
  }
  // The deterministic ring (owner computes, ways/deterministic_ring_way.cc) runs on
  // the host only; on a GPU the tree gives the reference order.
  if (s.onGpu && s.deterministic && key.collective == Collective::kAllReduce && nranks > 1) {
    a.algorithm[static_cast<int>(algo::Algorithm::kRing)] = false;
    a.algorithm[static_cast<int>(algo::Algorithm::kTree)] = true;
  }
}

Result<const CachedChoice*> Selector::modelAnswer(const ChoiceKey& key) {
  const SelectorSettings& s = settings_;
  tune::Query q;
  tune::Allowed a;
  queryFor(key, &q, &a);
  BRAID_ASSIGN_OR_RETURN(const tune::Choice choice, tune::choose(s.model, q, a));
  if (!tuner_) return choices_.insert(key, choice);
  // The plugin is offered what braid would weigh itself.
  BRAID_ASSIGN_OR_RETURN(const tune::CostTable offered, tune::modelTable(s.model, q, a));
  return choices_.insert(key, choice, offered);
}

}  // namespace braid::comm
