// One rank's run of the soak (runner.h).
#include "soak/runner.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "soak/call_run.h"
#include "soak/comms.h"
#include "soak/plan.h"

namespace braid::soak {
namespace {

/// Steps between two agreements on stopping: an agreement is a small all-reduce, cheap next to
/// four steps of calls that average a few hundred KiB.
constexpr uint64_t kAgreeEvery = 4;

class RankLoop {
 public:
  RankLoop(const Options& o, int rank, int nranks, Communicators& comms, Tally* tally)
      : o_(o), rank_(rank), nranks_(nranks), comms_(comms), tally_(tally) {}

  /// Runs the calls of `step` that the options keep; false after an error.
  bool run(const Step& step) {
    std::vector<const PlannedCall*> calls;
    std::vector<std::unique_ptr<CallRun>> runs;
    for (const PlannedCall& c : step.calls) {
      if ((o_.collectives >> static_cast<int>(c.coll) & 1) == 0) continue;
      calls.push_back(&c);
      runs.push_back(makeCallRun(c, rank_, nranks_, comms_.target(c.flavour)));
    }
    if (runs.empty()) return true;
    ++tally_->steps;
    if (o_.verbose) {
      for (const PlannedCall* c : calls) {
        printf("rank %d: %s%s on %s\n", rank_, describeCall(step.number, *c).c_str(),
               step.grouped ? " (grouped)" : "", comms_.flavour(c->flavour).name.c_str());
      }
      fflush(stdout);
    }
    bool ok = true;
    auto check = [&](ncclResult_t r, const PlannedCall* c, const char* what) {
      if (r == ncclSuccess) return;
      ok = false;
      ++tally_->errors;
      const ncclComm_t comm = c != nullptr ? comms_.target(c->flavour).comm : nullptr;
      std::string where = c != nullptr ? describe(step, *c) : "step " + std::to_string(step.number);
      tally_->note(where + ": " + what + " returned " + ncclGetErrorString(r) + ": " +
                       ncclGetLastError(comm),
                   o_.shown);
    };
    for (size_t i = 0; i < runs.size() && ok; ++i) check(runs[i]->prepare(), calls[i], "prepare");
    if (!ok) return false;
    if (step.grouped) check(ncclGroupStart(), nullptr, "ncclGroupStart");
    for (size_t i = 0; i < runs.size(); ++i) check(runs[i]->issue(), calls[i], "the call");
    if (step.grouped) check(ncclGroupEnd(), nullptr, "ncclGroupEnd");
    for (size_t i = 0; i < runs.size(); ++i) check(runs[i]->finish(), calls[i], "finish");
    if (!ok) return false;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (o_.corruptEvery > 0 && rank_ == nranks_ - 1 && ++corruptCount_ % o_.corruptEvery == 0) {
        runs[i]->corrupt(matrix::mixSeed(calls[i]->seed, 77));
      }
      const Verdict v = runs[i]->check();
      ++tally_->calls;
      ++tally_->perCollective[static_cast<int>(calls[i]->coll)];
      tally_->bytes += runs[i]->bytes();
      if (v.right) continue;
      ++tally_->wrong;
      tally_->note(describe(step, *calls[i]) + ": wrong result: " + v.detail, o_.shown);
    }
    return true;
  }

 private:
  std::string describe(const Step& step, const PlannedCall& c) const {
    return "rank " + std::to_string(rank_) + " " + describeCall(step.number, c) +
           (step.grouped ? " (grouped)" : "") + " on " + comms_.flavour(c.flavour).name;
  }

  const Options& o_;
  int rank_;
  int nranks_;
  Communicators& comms_;
  Tally* tally_;
  uint64_t corruptCount_ = 0;
};

/// Sums the ranks' tallies into `total` over the control communicator.
bool sumTallies(ncclComm_t control, const Tally& mine, Tally* total) {
  std::vector<uint64_t> v = {mine.calls, mine.bytes, mine.wrong, mine.errors};
  for (uint64_t c : mine.perCollective) v.push_back(c);
  if (ncclAllReduce(v.data(), v.data(), v.size(), ncclUint64, ncclSum, control, nullptr) !=
      ncclSuccess) {
    return false;
  }
  *total = mine;
  total->calls = v[0];
  total->bytes = v[1];
  total->wrong = v[2];
  total->errors = v[3];
  for (int c = 0; c < kNumCollectives; ++c) total->perCollective[c] = v[4 + c];
  return true;
}

}  // namespace

void runRank(const Options& o, const ncclUniqueId& id, int rank, int nranks, Tally* tally,
             Tally* total) {
  const std::vector<Flavour> flavours = flavoursFor(o.memory);
  Communicators comms;
  std::string error;
  if (!comms.create(flavours, id, rank, nranks, &error)) {
    ++tally->errors;
    tally->note("rank " + std::to_string(rank) + ": " + error, o.shown);
    comms.abort();
    return;
  }
  PlanSpace space;
  space.nranks = nranks;
  space.nflavours = static_cast<int>(flavours.size());
  space.maxBytes = o.maxBytes;
  space.maxGroup = o.maxGroup;
  RankLoop loop(o, rank, nranks, comms, tally);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  bool ok = true;
  for (uint64_t s = o.firstStep; ok; ++s) {
    const uint64_t done = s - o.firstStep;
    if (o.steps > 0 && done >= o.steps) break;
    if (o.steps == 0 && done % kAgreeEvery == 0) {
      int32_t stop = elapsed() >= o.seconds ? 1 : 0;
      const ncclResult_t r =
          ncclAllReduce(&stop, &stop, 1, ncclInt32, ncclMax, comms.control(), nullptr);
      if (r != ncclSuccess) {
        ++tally->errors;
        tally->note("rank " + std::to_string(rank) + " step " + std::to_string(s) +
                        ": agreeing on stopping: " + ncclGetErrorString(r) + ": " +
                        ncclGetLastError(comms.control()),
                    o.shown);
        ok = false;
        break;
      }
      if (stop != 0) break;
    }
    ok = loop.run(planStep(space, o.seed, s));
  }
  tally->seconds = elapsed();
  if (!ok) {
    comms.abort();
    return;
  }
  if (total != nullptr && !sumTallies(comms.control(), *tally, total)) {
    ++tally->errors;
    tally->note("rank " + std::to_string(rank) + ": summing the tallies failed", o.shown);
  }
}

}  // namespace braid::soak
