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
#include <memory>
#include <utility>

#include "braid/status.h"
#include "comm/call.h"
#include "tune/plugin/cost_table.h"
#include "tune/plugin/tuner_session.h"
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

/// A kept answer: the model's choice, and the cost table it offers a tuner plugin (all ignored
/// when the communicator has none).
struct CachedChoice : tune::Choice {
  tune::CostTable offered = tune::ignoredTable();
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
  const CachedChoice* find(const ChoiceKey& key) {
    for (size_t i = 0; i < size_; ++i) {
      if (!(entries_[i].key == key)) continue;
      std::rotate(entries_.begin(), entries_.begin() + i, entries_.begin() + i + 1);
      return &entries_[0].choice;
    }
    return nullptr;
  }

  /// Keeps `choice` (and the table it offers a tuner) as the most recent answer, dropping the
  /// oldest when full; returns what it kept.
  const CachedChoice* insert(const ChoiceKey& key, const tune::Choice& choice,
                             const tune::CostTable& offered = tune::ignoredTable()) {
    if (size_ < kEntries) ++size_;
    std::rotate(entries_.begin(), entries_.begin() + size_ - 1, entries_.begin() + size_);
    entries_[0].key = key;
    static_cast<tune::Choice&>(entries_[0].choice) = choice;
    entries_[0].choice.offered = offered;
    return &entries_[0].choice;
  }

  size_t size() const { return size_; }
  /// Forgets every answer (a suspend took away what some of them relied on).
  void clear() { size_ = 0; }

 private:
  struct Entry {
    ChoiceKey key;
    CachedChoice choice;
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

/// The size a call is timed at, for braid's model and a tuner plugin alike: nccl-tests' size
/// (the whole gathered or scattered buffer, from the largest block when the blocks vary).
size_t timedBytes(const CollectiveCall& call, int nranks);

class Selector {
 public:
  /// A selector of a made communicator: its settings are final, but for the one-shot boards,
  /// which a suspend gives back and a resume makes again (disableOneShot, enableOneShot).
  /// `tuner`, where the communicator has a tuner plugin, is asked about every call.
  explicit Selector(SelectorSettings settings, std::unique_ptr<tune::TunerSession> tuner = nullptr)
      : settings_(std::move(settings)), tuner_(std::move(tuner)) {}

  /// The algorithm and protocol of `call` (tune/select.h, or the ring for what only the ring
  /// runs), from the answers kept when a recent call asked the same. With a tuner plugin, the
  /// kept answer's cost table goes to the plugin on every call, as NCCL asks it on every call,
  /// and its answer decides (tune/plugin/cost_table.h); variable-count calls, which only the
  /// ring runs, are not offered to it.
  Result<tune::Choice> choose(const CollectiveCall& call);
  const SelectorSettings& settings() const { return settings_; }
  const tune::Model& model() const { return settings_.model; }
  /// The communicator's tuner plugin session; null when it has none.
  const tune::TunerSession* tuner() const { return tuner_.get(); }
  tune::TunerSession* tuner() { return tuner_.get(); }
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
  /// The model's answer for `key`, computed and kept.
  Result<const CachedChoice*> modelAnswer(const ChoiceKey& key);
  /// The query and the allowed set of a call of `key`'s shape, as the communicator's settings
  /// make them.
  void queryFor(const ChoiceKey& key, tune::Query* query, tune::Allowed* allowed) const;

  SelectorSettings settings_;
  ChoiceCache choices_;  ///< the answers for recent calls
  std::unique_ptr<tune::TunerSession> tuner_;
};

}  // namespace braid::comm
