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

}  // namespace

Result<tune::Choice> Selector::choose(const CollectiveCall& call) {
  const ChoiceKey key = choiceKey(call, settings_.nranks);
  const CachedChoice* answer = choices_.find(key);
  if (answer == nullptr) {
    BRAID_ASSIGN_OR_RETURN(answer, modelAnswer(key));
  }
  if (!tuner_ || key.variableCounts) return static_cast<const tune::Choice&>(*answer);
  return tuner_->decide(key.collective, key.bytes, answer->offered, *answer, settings_.nchannels);
}

Result<const CachedChoice*> Selector::modelAnswer(const ChoiceKey& key) {
  const SelectorSettings& s = settings_;
  const int nranks = s.nranks;
  tune::Query q;
  q.collective = key.collective;
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
  if (rooted(key.collective) && !s.algoForced) {
    a.algorithm[static_cast<int>(algo::Algorithm::kTree)] = false;
  }
  // The deterministic ring (owner computes, ways/deterministic_ring_way.cc) runs on
  // the host only; on a GPU the tree gives the reference order.
  if (s.onGpu && s.deterministic && key.collective == Collective::kAllReduce && nranks > 1) {
    a.algorithm[static_cast<int>(algo::Algorithm::kRing)] = false;
    a.algorithm[static_cast<int>(algo::Algorithm::kTree)] = true;
  }
  BRAID_ASSIGN_OR_RETURN(const tune::Choice choice, tune::choose(s.model, q, a));
  if (!tuner_) return choices_.insert(key, choice);
  // The plugin is offered what braid would weigh itself.
  BRAID_ASSIGN_OR_RETURN(const tune::CostTable offered, tune::modelTable(s.model, q, a));
  return choices_.insert(key, choice, offered);
}

}  // namespace braid::comm
