// A symbolic model that runs every rank's Schedule together, to check
// generators without transports or threads.
//
// It follows exec/host_executor.cc: steps with count 0 are skipped on both
// sides, a step moves its elements in slices of the schedule's sliceElems,
// and each (sender, receiver, channel) connection is a FIFO of
// transport::kFifoSlots slots, one slice each. A slice needs its incoming
// slot and a free outgoing slot before it runs, so a schedule that could
// deadlock on the real FIFOs gets stuck here, and runModel says where.
//
// Each rank has one block of memory; its input and output are windows into
// it, so in-place calls are modelled by making the windows overlap exactly as
// NCCL's aliasing rules say, and a step that reads input after another step
// overwrote it through the alias reads the wrong value.
//
// Values are pairs: `nibbles` counts contributions (a reducing test gives
// rank r the value 1 << 4r, so the right sum has a 1 in each of N nibbles and
// a contribution counted twice or missed shows as 2 or 0), and `tag` says
// where a value came from (copies keep it, reductions add it), so a value
// taken from the wrong rank or element shows up too.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "algo/schedule.h"
#include "braid/status.h"
#include "transport/connection.h"

namespace braid::testing {

struct ModelValue {
  uint64_t nibbles = 0;
  uint64_t tag = 0;
};
inline ModelValue operator+(ModelValue a, ModelValue b) {
  return {a.nibbles + b.nibbles, a.tag + b.tag};
}
inline bool operator==(ModelValue a, ModelValue b) {
  return a.nibbles == b.nibbles && a.tag == b.tag;
}
inline bool operator!=(ModelValue a, ModelValue b) { return !(a == b); }
inline std::ostream& operator<<(std::ostream& os, ModelValue v) {
  return os << "{nibbles 0x" << std::hex << v.nibbles << ", tag 0x" << v.tag << std::dec << "}";
}

/// A tag that differs for every (rank, element), so sums of tags from the
/// wrong places do not add up to the right one by accident.
inline uint64_t modelTag(int rank, size_t element) {
  uint64_t x = (static_cast<uint64_t>(rank) << 40) ^ element ^ 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// What a send buffer holds where a collective does not read it, and what a
/// receive buffer holds before the call: a read of either shows in the result.
inline constexpr ModelValue kModelPoison{0xdead, 0xdeadbeef};

/// Rank `rank`'s input element as a copying collective moves it: its tag alone.
inline ModelValue modelCopied(int rank, size_t element) { return {0, modelTag(rank, element)}; }

/// The same as a reducing collective adds it up: a nibble per rank counts
/// how often its contribution was added (16 ranks at most, 15 times each).
inline ModelValue modelReducedNibble(int rank, size_t element) {
  return {uint64_t(1) << (4 * rank), modelTag(rank, element)};
}

/// One rank: its schedule and its memory, with input at [inBase, inBase +
/// inLen) and output at [outBase, outBase + outLen) of it (they may overlap).
struct ModelRank {
  algo::Schedule schedule;
  std::vector<ModelValue> memory;
  size_t inBase = 0;
  size_t inLen = 0;
  size_t outBase = 0;
  size_t outLen = 0;

  /// Lays out `memoryLen` elements filled with `fill`: input at inAt, output
  /// at outAt, apart or overlapping as the call's aliasing says. The caller
  /// then fills the input through input().
  void layOut(size_t memoryLen, size_t inAt, size_t inLength, size_t outAt, size_t outLength,
              ModelValue fill) {
    memory.assign(memoryLen, fill);
    inBase = inAt;
    inLen = inLength;
    outBase = outAt;
    outLen = outLength;
  }
  ModelValue* input() { return memory.data() + inBase; }
  const ModelValue* outputData() const { return memory.data() + outBase; }
  std::vector<ModelValue> output() const {
    return {memory.begin() + outBase, memory.begin() + outBase + outLen};
  }
};

namespace model_detail {

// One connection: kFifoSlots slots of one slice each, reused like the real
// ones, so that the model does not allocate per slice.
struct Fifo {
  std::vector<ModelValue> slots[transport::kFifoSlots];
  size_t posted = 0;    // slices the sender has put in
  size_t released = 0;  // slices the receiver has taken out
  size_t used() const { return posted - released; }
};

using FifoMap = std::map<std::tuple<int, int, size_t>, Fifo>;

struct Cursor {
  size_t channel = 0;
  size_t step = 0;
  size_t done = 0;  // elements of the current step already moved
  // The connections of the current step, looked up once per step.
  bool looked = false;
  Fifo* in = nullptr;
  Fifo* out = nullptr;
};

inline bool finished(const ModelRank& r, const Cursor& c) {
  return c.channel >= r.schedule.channels.size();
}

// Moves past finished and empty steps and channels.
inline void advance(const ModelRank& r, Cursor& c) {
  while (!finished(r, c)) {
    const auto& steps = r.schedule.channels[c.channel].steps;
    if (c.step < steps.size() && c.done < steps[c.step].count) return;
    c.looked = false;
    if (c.step < steps.size()) {
      ++c.step;
      c.done = 0;
      continue;
    }
    ++c.channel;
    c.step = 0;
    c.done = 0;
  }
}

inline std::string where(int rank, const Cursor& c) {
  return "rank " + std::to_string(rank) + " channel " + std::to_string(c.channel) + " step " +
         std::to_string(c.step);
}

// Checks the current step of `rank` once and finds its connections.
inline Status lookUp(std::vector<ModelRank>& ranks, int rank, Cursor& c, FifoMap& fifos) {
  const ModelRank& r = ranks[rank];
  const algo::Step& step = r.schedule.channels[c.channel].steps[c.step];
  const int nranks = static_cast<int>(ranks.size());
  const bool receives = algo::stepReceives(step.op);
  const bool sends = algo::stepSends(step.op);
  if ((receives && (step.recvPeer < 0 || step.recvPeer >= nranks)) ||
      (sends && (step.sendPeer < 0 || step.sendPeer >= nranks))) {
    return internalError(where(rank, c) + ": peer out of range");
  }
  if (r.schedule.sliceElems == 0) return internalError(where(rank, c) + ": sliceElems is 0");
  if (algo::stepReadsInput(step) && step.inOffset + step.count > r.inLen) {
    return internalError(where(rank, c) + ": reads past the input");
  }
  if (algo::stepReadsOutput(step) && step.outOffset + step.count > r.outLen) {
    return internalError(where(rank, c) + ": reads past the output");
  }
  if (algo::stepWritesOutput(step.op) && step.outOffset + step.count > r.outLen) {
    return internalError(where(rank, c) + ": writes past the output");
  }
  c.in = receives ? &fifos[{step.recvPeer, rank, c.channel}] : nullptr;
  c.out = sends ? &fifos[{rank, step.sendPeer, c.channel}] : nullptr;
  c.looked = true;
  return Status::success();
}

// Runs the next slice of `rank` if it can: *moved says whether it did.
inline Status runSlice(std::vector<ModelRank>& ranks, int rank, Cursor& c, FifoMap& fifos,
                       bool* moved) {
  *moved = false;
  if (!c.looked) BRAID_TRY(lookUp(ranks, rank, c, fifos));
  ModelRank& r = ranks[rank];
  const algo::Step& step = r.schedule.channels[c.channel].steps[c.step];
  const size_t n = std::min(r.schedule.sliceElems, step.count - c.done);
  if (c.in && c.in->used() == 0) return Status::success();
  if (c.out && c.out->used() >= static_cast<size_t>(transport::kFifoSlots)) {
    return Status::success();
  }
  const ModelValue* recv = nullptr;
  if (c.in) {
    const auto& slot = c.in->slots[c.in->released % transport::kFifoSlots];
    if (slot.size() != n) {
      return internalError(where(rank, c) + ": received a slice of " + std::to_string(slot.size()) +
                           " elements, expected " + std::to_string(n));
    }
    recv = slot.data();
  }
  ModelValue* send = nullptr;
  if (c.out) {
    auto& slot = c.out->slots[c.out->posted % transport::kFifoSlots];
    slot.resize(n);
    send = slot.data();
  }
  const bool reduces = algo::stepReduces(step.op);
  const ModelValue* mine =
      algo::stepReadsInput(step)    ? r.memory.data() + r.inBase + step.inOffset + c.done
      : algo::stepReadsOutput(step) ? r.memory.data() + r.outBase + step.outOffset + c.done
                                    : nullptr;
  ModelValue* dst = algo::stepWritesOutput(step.op)
                        ? r.memory.data() + r.outBase + step.outOffset + c.done
                        : nullptr;
  // Element by element, each read before its write, so that input and
  // output aliasing the same element behaves as in the executors.
  for (size_t i = 0; i < n; ++i) {
    const ModelValue v = reduces ? recv[i] + mine[i] : mine ? mine[i] : recv[i];
    if (dst) dst[i] = v;
    if (send) send[i] = v;
  }
  if (c.in) ++c.in->released;
  if (c.out) ++c.out->posted;
  c.done += n;
  *moved = true;
  return Status::success();
}

}  // namespace model_detail

/// Runs all ranks' schedules to completion. Fails on a deadlock (naming where
/// each unfinished rank waits), on a slice whose size the two ends disagree
/// on, on an access outside a buffer, and on messages left unreceived.
inline Status runModel(std::vector<ModelRank>& ranks) {
  using namespace model_detail;
  FifoMap fifos;
  std::vector<Cursor> cursors(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) advance(ranks[r], cursors[r]);
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t r = 0; r < ranks.size(); ++r) {
      bool moved = true;
      while (moved && !finished(ranks[r], cursors[r])) {
        BRAID_TRY(runSlice(ranks, static_cast<int>(r), cursors[r], fifos, &moved));
        if (moved) {
          advance(ranks[r], cursors[r]);
          progress = true;
        }
      }
    }
  }
  std::string stuck;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (!finished(ranks[r], cursors[r]))
      stuck += " " + where(static_cast<int>(r), cursors[r]) + ";";
  }
  if (!stuck.empty()) return internalError("deadlock:" + stuck);
  for (const auto& [key, fifo] : fifos) {
    if (fifo.used() != 0) {
      return internalError(std::to_string(fifo.used()) + " slices from rank " +
                           std::to_string(std::get<0>(key)) + " to rank " +
                           std::to_string(std::get<1>(key)) + " were never received");
    }
  }
  return Status::success();
}

}  // namespace braid::testing
