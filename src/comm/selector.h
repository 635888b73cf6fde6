// Selector: which algorithm and protocol run a collective call.
//
// It owns what BRAID_ALGO / BRAID_PROTO allow, the cost model that chooses among it
// (tune/select.h), deterministic mode, and the answers for the last few distinct calls. It is
// made once the communicator is connected, from the settings its creation gathered
// (SelectorSettings), which it keeps unchanged but for the one-shot boards a suspend gives
// back, forgetting its answers then: that is what lets the cache key an answer by the call.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>

#include "braid/status.h"
#include "comm/call.h"
#include "tune/select.h"

namespace braid::comm {

/// What the selector's answer for one call depends on beyond the communicator's fixed state.
struct ChoiceKey {
  Collective collective = Collective::kAllReduce;
  size_t bytes = 0;             ///< tune::Query::bytes (from the largest block when variable)
  bool variableCounts = false;  ///< blockCounts given: only the ring runs it
  bool operator==(const ChoiceKey& o) const {
    return collective == o.collective && bytes == o.bytes && variableCounts == o.variableCounts;
  }
};

/// The selector's answers for the last few distinct calls, most recent first.
/// tune::choose runs the cost model for every allowed (algorithm, protocol),
/// 70-250 ns per call on the development VM, against a few microseconds for a
/// whole small all_reduce; a training step repeats a handful of sizes, so a
/// short list scanned in order finds them (9-40 ns, braid-select-bench).
class ChoiceCache {
 public:
  static constexpr size_t kEntries = 8;

  /// The answer kept for `key`, which becomes the most recent; nullptr when none is.
  const tune::Choice* find(const ChoiceKey& key) {
    for (size_t i = 0; i < size_; ++i) {
      if (!(entries_[i].key == key)) continue;
      std::rotate(entries_.begin(), entries_.begin() + i, entries_.begin() + i + 1);
      return &entries_[0].choice;
    }
    return nullptr;
  }

  /// Keeps `choice` as the most recent answer, dropping the oldest when full.
  void insert(const ChoiceKey& key, const tune::Choice& choice) {
    if (size_ < kEntries) ++size_;
    std::rotate(entries_.begin(), entries_.begin() + size_ - 1, entries_.begin() + size_);
    entries_[0] = {key, choice};
  }

  size_t size() const { return size_; }
  /// Forgets every answer (a suspend took away what some of them relied on).
  void clear() { size_ = 0; }

 private:
  struct Entry {
    ChoiceKey key;
    tune::Choice choice;
  };
  std::array<Entry, kEntries> entries_{};
  size_t size_ = 0;
};

/// What the selector's answers depend on beyond the call, settled while the communicator is
/// made (Comm::create, Comm::Impl::connect, Links::connectRing, GpuSide::connect).
struct SelectorSettings {
  tune::Allowed allowed;  ///< BRAID_ALGO / BRAID_PROTO, less what this communicator cannot run
  tune::Model model;
  bool deterministic = false;  ///< BRAID_DETERMINISTIC
  bool algoForced = false;     ///< BRAID_ALGO was given
  int nranks = 1;
  int nchannels = 1;
  /// Hosts the ranks spread over: the model counts the hops that cross them at the network's
  /// figures, and one-shot (which reads its peers' memory) does not run across them.
  int nhosts = 1;
  bool onGpu = false;
  bool oneShotBoard = false;  ///< a one-shot board was made (host or GPU)
};

class Selector {
 public:
  /// A selector of a made communicator: its settings are final, but for the one-shot boards,
  /// which a suspend gives back and a resume makes again (disableOneShot, enableOneShot).
  explicit Selector(SelectorSettings settings) : settings_(std::move(settings)) {}

  /// The algorithm and protocol of `call` (tune/select.h, or the ring for what only the ring
  /// runs), from the answers kept when a recent call asked the same.
  Result<tune::Choice> choose(const CollectiveCall& call);
  const SelectorSettings& settings() const { return settings_; }
  const tune::Model& model() const { return settings_.model; }
  /// The one-shot boards are gone (a suspend): no call takes the one-shot until they are back.
  void disableOneShot() {
    settings_.allowed.oneShotMaxBytes = 0;
    settings_.oneShotBoard = false;
    choices_.clear();
  }
  /// The one-shot boards are back (a resume), for calls of up to `maxBytes`.
  void enableOneShot(size_t maxBytes) {
    settings_.allowed.oneShotMaxBytes = maxBytes;
    settings_.oneShotBoard = true;
    choices_.clear();
  }
  /// Forgets the answers kept for recent calls.
  void forgetChoices() { choices_.clear(); }
  /// How many answers it keeps now.
  size_t keptChoices() const { return choices_.size(); }

 private:
  /// choose's answer for a call with options of its own (CollectiveCall::tuning), from the query
  /// and allowed set a call without them would have.
  Result<tune::Choice> chooseTuned(const CollectiveCall& call, tune::Query q,
                                   tune::Allowed a) const;

  SelectorSettings settings_;
  ChoiceCache choices_;  ///< the answers for recent calls
};

}  // namespace braid::comm
