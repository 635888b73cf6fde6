#include "symbolic_check.h"

#include <algorithm>
#include <string>
#include <vector>

#include "agent_cursor.h"
#include "fifo_counters.h"
#include "rank_memory.h"
#include "ready_set.h"
#include "symbolic_value.h"

namespace braid::sim {
namespace {

struct Fifo : FifoCounters {
  Value slots[kFifoSlots];
};

// Where two values reduced together disagree on the element they hold.
struct ElementClash {
  uint64_t position = 0;
  uint64_t recvElement = 0;
  uint64_t localElement = 0;
};

// out = a op b, piece by piece; false (with the clash) if some position of a
// holds another element than the same position of b.
bool reduceValues(const Value& a, const Value& b, Value& out, ElementClash* clash) {
  out.clear();
  size_t i = 0, j = 0;
  uint64_t ai = 0, bj = 0, position = 0;
  while (i < a.size() && j < b.size()) {
    const Piece& pa = a[i];
    const Piece& pb = b[j];
    const uint64_t take = std::min(pa.len - ai, pb.len - bj);
    const uint64_t srcA = pa.src + ai;
    const uint64_t srcB = pb.src + bj;
    if (!pa.who.unwritten() && !pb.who.unwritten() && srcA != srcB) {
      *clash = {position, srcA, srcB};
      return false;
    }
    appendPiece(out,
                Piece{take, pa.who.unwritten() ? srcB : srcA, reduceContributions(pa.who, pb.who)});
    position += take;
    ai += take;
    bj += take;
    if (ai == pa.len) ++i, ai = 0;
    if (bj == pb.len) ++j, bj = 0;
  }
  return true;
}

class Checker {
 public:
  Checker(const ScheduleSet& set, const ExpectedOutput& expected, const CheckOptions& options)
      : set_(set), expected_(expected), options_(options), keys_(set.nranks, options.seed) {}

  Result<CheckStats> run(const std::vector<BufferLayout>& layouts) {
    memory_.reserve(set_.nranks);
    for (int r = 0; r < set_.nranks; ++r) memory_.emplace_back(layouts[r], r, keys_);
    fifos_ = std::vector<Fifo>(set_.connections.size());
    for (size_t c = 0; c < fifos_.size(); ++c) {
      const Connection& conn = set_.connections[c];
      fifos_[c].senderAgent = set_.agentOf(conn.sender, conn.channel);
      fifos_[c].receiverAgent = set_.agentOf(conn.receiver, conn.channel);
    }
    BRAID_TRY(checkAccesses());
    agents_.assign(set_.agents.size(), AgentCursor{});
    for (size_t a = 0; a < agents_.size(); ++a) {
      agents_[a].sliceElems = set_.sliceElems[set_.rankOf(static_cast<int>(a))];
    }
    ready_.resize(agents_.size());
    for (size_t a = 0; a < agents_.size(); ++a) ready_.add(static_cast<int>(a));
    while (!ready_.empty()) {
      for (int agent = ready_.takeFrom(0); agent >= 0; agent = ready_.takeFrom(agent)) {
        BRAID_TRY(runAgent(agent));
      }
    }
    BRAID_TRY(reportStuck());
    BRAID_TRY(reportLeftovers());
    BRAID_TRY(compareOutputs());
    return stats_;
  }

 private:
  std::string where(int agent) const {
    const AgentCursor& a = agents_[agent];
    const AgentSchedule& runs = set_.agents[agent];
    return set_.describeStep(agent, a.stepIndex(runs), a.step(runs));
  }

  // Every step's buffer accesses, checked before the run so that the run
  // need not: a run's offsets move linearly, so each block step inside a
  // buffer in the first and the last repetition is inside in all of them.
  Status checkAccesses() const {
    for (size_t agent = 0; agent < set_.agents.size(); ++agent) {
      const int rank = set_.rankOf(static_cast<int>(agent));
      const BufferLayout& l = memory_[rank].layout();
      if (set_.sliceElems[rank] == 0) {
        return invalidArgument("rank " + std::to_string(rank) + ": the schedule's sliceElems is 0");
      }
      const AgentSchedule& schedule = set_.agents[agent];
      uint64_t index = 0;
      for (const StepRun& run : schedule.runs) {
        for (uint32_t p = 0; p < run.period; ++p) {
          for (uint32_t rep : {0u, run.repeats - 1}) {
            const algo::Step s = schedule.stepAt(run, rep, p);
            if (s.count == 0) continue;
            BRAID_TRY(
                checkAccess(static_cast<int>(agent), index + uint64_t{rep} * run.period + p, s, l));
          }
        }
        index += run.length();
      }
    }
    return Status::success();
  }

  Status checkAccess(int agent, uint64_t index, const algo::Step& s, const BufferLayout& l) const {
    auto outside = [](uint64_t offset, uint64_t count, uint64_t len) {
      return count > len || offset > len - count;
    };
    auto range = [&](uint64_t offset) {
      return "[" + std::to_string(offset) + ", " + std::to_string(offset + s.count) + ")";
    };
    if (algo::stepReadsInput(s) && outside(s.inOffset, s.count, l.inLen)) {
      return internalError(set_.describeStep(agent, index, s) + ": reads input " +
                           range(s.inOffset) + " past its end at " + std::to_string(l.inLen));
    }
    if ((algo::stepReadsOutput(s) || algo::stepWritesOutput(s.op)) &&
        outside(s.outOffset, s.count, l.outLen)) {
      return internalError(set_.describeStep(agent, index, s) + ": uses output " +
                           range(s.outOffset) + " past its end at " + std::to_string(l.outLen));
    }
    return Status::success();
  }

  void wake(int agent) { ready_.add(agent); }

  Status runAgent(int agent) {
    AgentCursor& a = agents_[agent];
    const AgentSchedule& runs = set_.agents[agent];
    while (a.settle(runs)) {
      Fifo* in = a.inConn >= 0 ? &fifos_[a.inConn] : nullptr;
      Fifo* out = a.outConn >= 0 ? &fifos_[a.outConn] : nullptr;
      if (in != nullptr && in->empty()) {
        in->receiverWaiting = true;
        return Status::success();
      }
      if (out != nullptr && out->full()) {
        out->senderWaiting = true;
        return Status::success();
      }
      BRAID_TRY(moveSlice(agent, in, out));
    }
    a.finished = true;
    return Status::success();
  }

  Status moveSlice(int agent, Fifo* in, Fifo* out) {
    AgentCursor& a = agents_[agent];
    RankMemory& memory = memory_[set_.rankOf(agent)];
    const uint64_t n = a.sliceLen();
    const Value* recv = nullptr;
    if (in != nullptr) {
      const int slot = static_cast<int>(in->released % kFifoSlots);
      if (in->sliceLen[slot] != n) {
        return internalError(where(agent) + ": received a slice of " +
                             std::to_string(in->sliceLen[slot]) + " elements from rank " +
                             std::to_string(set_.connections[a.inConn].sender) + ", expected " +
                             std::to_string(n));
      }
      recv = &in->slots[slot];
    }
    local_.clear();
    if (algo::stepReadsLocal(a.op)) {
      if (a.fromOutput) {
        memory.readOutput(a.outOffset + a.done, n, local_);
      } else {
        memory.readInput(a.inOffset + a.done, n, local_);
      }
    }
    const Value* result = recv != nullptr ? recv : &local_;
    if (algo::stepReduces(a.op)) {
      ElementClash clash;
      if (!reduceValues(*recv, local_, reduced_, &clash)) {
        return internalError(
            where(agent) + ": at element " + std::to_string(a.done + clash.position) +
            " of the step reduces element " + std::to_string(clash.recvElement) +
            " received from rank " + std::to_string(set_.connections[a.inConn].sender) +
            " with element " + std::to_string(clash.localElement) + " of its own " +
            (a.fromOutput ? "output" : "input"));
      }
      result = &reduced_;
    }
    if (algo::stepWritesOutput(a.op)) memory.writeOutput(a.outOffset + a.done, *result);
    if (out != nullptr) {
      const int slot = static_cast<int>(out->posted % kFifoSlots);
      out->slots[slot] = *result;
      out->sliceLen[slot] = n;
      ++out->posted;
      if (out->receiverWaiting) {
        out->receiverWaiting = false;
        wake(out->receiverAgent);
      }
    }
    if (in != nullptr) {
      ++in->released;
      if (in->senderWaiting) {
        in->senderWaiting = false;
        wake(in->senderAgent);
      }
    }
    if (a.done == 0) ++stats_.stepsRun;
    a.done += n;
    ++stats_.slices;
    return Status::success();
  }

  // The agent a stuck agent waits for, and what for.
  int waitsFor(int agent, std::string* why) const {
    const AgentCursor& a = agents_[agent];
    if (a.inConn >= 0 && fifos_[a.inConn].empty()) {
      const Fifo& f = fifos_[a.inConn];
      *why = "waits for a slice from rank " + std::to_string(set_.rankOf(f.senderAgent));
      return f.senderAgent;
    }
    const Fifo& f = fifos_[a.outConn];
    *why = "waits for a free slot to rank " + std::to_string(set_.rankOf(f.receiverAgent)) + " (" +
           std::to_string(f.used()) + " slices unreceived)";
    return f.receiverAgent;
  }

  std::string stateOf(int agent) const {
    if (agents_[agent].finished) return "has finished";
    return "is at " + where(agent);
  }

  Status reportStuck() const {
    std::vector<int> stuck;
    for (size_t a = 0; a < agents_.size(); ++a) {
      if (!agents_[a].finished) stuck.push_back(static_cast<int>(a));
    }
    if (stuck.empty()) return Status::success();
    std::string text = "deadlock: " + std::to_string(stuck.size()) + " of " +
                       std::to_string(agents_.size()) + " agents cannot move";
    // The chain of waits from the first stuck agent: it ends in a cycle, or
    // at an agent that has finished and will never send or receive again.
    std::vector<int> chain;
    std::vector<char> seen(agents_.size(), 0);
    int at = stuck.front();
    std::string why;
    while (!agents_[at].finished && !seen[at]) {
      seen[at] = 1;
      chain.push_back(at);
      at = waitsFor(at, &why);
    }
    const bool cycle = !agents_[at].finished;
    text += cycle ? "; wait cycle:" : "; chain of waits:";
    size_t from = cycle ? std::find(chain.begin(), chain.end(), at) - chain.begin() : 0;
    const size_t shown = std::min<size_t>(chain.size() - from, 16);
    for (size_t i = from; i < from + shown; ++i) {
      text += " rank " + std::to_string(set_.rankOf(chain[i])) + " ->";
    }
    if (chain.size() - from > shown) text += " ... ->";
    text += " rank " + std::to_string(set_.rankOf(at)) + (cycle ? "" : " (finished)");
    int reported = 0;
    for (int agent : stuck) {
      if (reported++ == options_.maxReports) {
        text += "\n  ... and " + std::to_string(stuck.size() - options_.maxReports) + " more";
        break;
      }
      const int other = waitsFor(agent, &why);
      text += "\n  " + where(agent) + " " + why + ", which " + stateOf(other);
    }
    return internalError(text);
  }

  Status reportLeftovers() const {
    std::string text;
    int reported = 0;
    for (size_t c = 0; c < fifos_.size(); ++c) {
      if (fifos_[c].empty()) continue;
      if (reported++ == options_.maxReports) {
        text += "\n  ...";
        break;
      }
      const Connection& conn = set_.connections[c];
      text += "\n  " + std::to_string(fifos_[c].used()) + " slices from rank " +
              std::to_string(conn.sender) + " to rank " + std::to_string(conn.receiver) +
              (set_.nchannels > 1 ? " on channel " + std::to_string(conn.channel) : "");
    }
    if (text.empty()) return Status::success();
    return internalError("every rank finished, but slices were never received:" + text);
  }

  std::string describe(const Piece& p, uint64_t offset) const {
    if (p.who.unwritten()) return "nothing (never written)";
    std::string what = "element " + std::to_string(p.src + offset) + " of ";
    if (p.who == keys_.all()) return what + "every rank's contribution";
    if (p.who.count == 1) {
      for (int r = 0; r < set_.nranks; ++r) {
        if (p.who == keys_.single(r)) return what + "rank " + std::to_string(r) + " alone";
      }
    }
    what += std::to_string(p.who.count) + " contributions";
    if (p.who.count == static_cast<uint32_t>(set_.nranks)) {
      what += " (as many as ranks, but not one from each: one counted twice, another missed)";
    } else if (p.who.count > static_cast<uint32_t>(set_.nranks)) {
      what += " (more than ranks: some counted twice)";
    }
    return what;
  }

  // The first position where `actual` and `expected` differ, described; empty if none.
  std::string firstDifference(const Value& actual, const Value& expected) const {
    size_t i = 0, j = 0;
    uint64_t ai = 0, ej = 0, position = 0;
    while (i < actual.size() && j < expected.size()) {
      const Piece& pa = actual[i];
      const Piece& pe = expected[j];
      const uint64_t take = std::min(pa.len - ai, pe.len - ej);
      if (pa.who != pe.who || (!pa.who.unwritten() && pa.src + ai != pe.src + ej)) {
        return "output element " + std::to_string(position) + " holds " + describe(pa, ai) +
               ", expected " + describe(pe, ej);
      }
      position += take;
      ai += take;
      ej += take;
      if (ai == pa.len) ++i, ai = 0;
      if (ej == pe.len) ++j, ej = 0;
    }
    return "";
  }

  // What is wrong with an output of `len` positions, or empty if nothing: a
  // caller of checkOnBuffers may expect another length than the layout's.
  std::string differenceOf(const Value& actual, uint64_t len, const Value& expected) const {
    const uint64_t expectedLen = totalLength(expected);
    if (len != expectedLen) {
      return "the output has " + std::to_string(len) + " elements, expected " +
             std::to_string(expectedLen);
    }
    return firstDifference(actual, expected);
  }

  Status compareOutputs() {
    std::string text;
    int wrong = 0;
    Value actual;
    for (int r = 0; r < set_.nranks; ++r) {
      const std::optional<Value> expected = expected_(r, keys_);
      stats_.memoryIntervals += memory_[r].intervals();
      if (!expected) continue;
      actual.clear();
      const uint64_t len = memory_[r].layout().outLen;
      memory_[r].readOutput(0, len, actual);
      ++stats_.ranksChecked;
      stats_.elementsChecked += len;
      const std::string difference = differenceOf(actual, len, *expected);
      if (difference.empty()) continue;
      if (wrong++ < options_.maxReports)
        text += "\n  rank " + std::to_string(r) + ": " + difference;
    }
    if (wrong == 0) return Status::success();
    if (wrong > options_.maxReports) {
      text += "\n  ... and " + std::to_string(wrong - options_.maxReports) + " more ranks";
    }
    return internalError(std::to_string(wrong) + " of " + std::to_string(set_.nranks) +
                         " ranks end with wrong data:" + text);
  }

  const ScheduleSet& set_;
  const ExpectedOutput& expected_;
  CheckOptions options_;
  RankKeys keys_;
  std::vector<RankMemory> memory_;
  std::vector<Fifo> fifos_;
  std::vector<AgentCursor> agents_;
  ReadySet ready_;
  Value local_;
  Value reduced_;
  CheckStats stats_;
};

}  // namespace

Result<CheckStats> checkSymbolically(const ScheduleSet& set, const CheckOptions& options) {
  std::vector<BufferLayout> layouts;
  for (int r = 0; r < set.nranks; ++r) {
    layouts.push_back(layoutOf(set.collective, set.nranks, r, set.count, options.inPlace));
  }
  const ExpectedOutput expected = [&set](int rank, const RankKeys& keys) {
    return expectedOutput(set.collective, set.nranks, set.root, rank, set.count, keys);
  };
  return checkOnBuffers(set, layouts, expected, options);
}

Result<CheckStats> checkOnBuffers(const ScheduleSet& set, const std::vector<BufferLayout>& layouts,
                                  const ExpectedOutput& expected, const CheckOptions& options) {
  if (set.nranks <= 0 || set.agents.size() != static_cast<size_t>(set.nranks) * set.nchannels) {
    return invalidArgument("checkSymbolically: the schedule set is incomplete");
  }
  if (layouts.size() != static_cast<size_t>(set.nranks)) {
    return invalidArgument("checkOnBuffers: " + std::to_string(layouts.size()) + " layouts for " +
                           std::to_string(set.nranks) + " ranks");
  }
  for (int r = 0; r < set.nranks; ++r) {
    if (!fitsItsMemory(layouts[r])) {
      return invalidArgument("checkOnBuffers: rank " + std::to_string(r) +
                             "'s buffers lie outside its memory");
    }
  }
  Checker checker(set, expected, options);
  return checker.run(layouts);
}

Result<CheckStats> checkOnBuffers(const std::vector<algo::Schedule>& schedules,
                                  const std::vector<BufferLayout>& layouts,
                                  const ExpectedOutput& expected, const CheckOptions& options) {
  Result<ScheduleSet> set = makeScheduleSet(schedules);
  if (!set.ok()) return set.status();
  return checkOnBuffers(set.value(), layouts, expected, options);
}

}  // namespace braid::sim
