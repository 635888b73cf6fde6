// An agent's place in its steps, for both simulators: the current step
// decoded from its run, and how much of it has moved. It fits one cache
// line, because a 4096-rank ring visits every agent once per slice wave and
// each visit that misses the cache costs as much as the slice itself.
#pragma once

#include <cstdint>
#include <vector>

#include "compact_schedule.h"

namespace braid::sim {

struct alignas(64) AgentCursor {
  uint64_t inOffset = 0;
  uint64_t outOffset = 0;
  uint64_t count = 0;  ///< elements of the current step
  uint64_t done = 0;   ///< elements of it already moved
  uint64_t sliceElems = 0;
  uint32_t run = 0;  ///< the current step is step `pos` of repetition `rep` of run `run`
  uint32_t rep = 0;
  uint32_t pos = 0;
  int32_t inConn = -1;
  int32_t outConn = -1;
  algo::StepOp op = algo::StepOp::kSend;
  bool fromOutput = false;
  bool loaded = false;
  bool finished = false;

  /// Moves to the next step with elements left to move, skipping empty
  /// steps as the executors do; false when the agent has no step left.
  bool settle(const AgentSchedule& a) {
    for (;;) {
      if (loaded) {
        if (done < count) return true;
        loaded = false;
        next(a);
      }
      if (run >= a.runs.size()) return false;
      const StepRun& r = a.runs[run];
      const BlockStep& b = a.blockSteps[r.first + pos];
      if (b.step.count == 0) {
        if (r.period == 1) {  // a run of empty steps (a ring of more ranks than elements)
          ++run;
          rep = 0;
        } else {
          next(a);
        }
        continue;
      }
      inOffset = b.step.inOffset + static_cast<uint64_t>(r.inStride * static_cast<int64_t>(rep));
      outOffset = b.step.outOffset + static_cast<uint64_t>(r.outStride * static_cast<int64_t>(rep));
      count = b.step.count;
      done = 0;
      op = b.step.op;
      fromOutput = b.step.fromOutput;
      inConn = b.inConn;
      outConn = b.outConn;
      loaded = true;
    }
  }

  /// Elements of the next slice.
  uint64_t sliceLen() const { return count - done < sliceElems ? count - done : sliceElems; }

  /// The current step's number in its channel (for messages).
  uint64_t stepIndex(const AgentSchedule& a) const {
    uint64_t index = uint64_t{rep} * (run < a.runs.size() ? a.runs[run].period : 0) + pos;
    for (uint32_t r = 0; r < run && r < a.runs.size(); ++r) index += a.runs[r].length();
    return index;
  }
  algo::Step step(const AgentSchedule& a) const {
    return run < a.runs.size() ? a.stepAt(a.runs[run], rep, pos) : algo::Step{};
  }

 private:
  void next(const AgentSchedule& a) {
    const StepRun& r = a.runs[run];
    if (++pos < r.period) return;
    pos = 0;
    if (++rep < r.repeats) return;
    rep = 0;
    ++run;
  }
};

}  // namespace braid::sim
