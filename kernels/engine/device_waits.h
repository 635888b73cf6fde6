// How the engine waits on a GPU, real or emulated, for what a peer writes:
// a FIFO counter, or LL cells. Every wait polls and looks at three reasons to
// give up: the deadline, every kPollsPerCheck polls (the clock is the GPU's
// own timer, no memory read); the communicator's abort word and a fault
// another block of this launch recorded, every kPollsPerAbortCheck polls,
// since both lie in pinned host memory, which every such read crosses PCIe
// for (in the Simple protocol one thread of a block polls; in LL every
// thread polls its own cells, and so reads them rarely). A kernel that waits
// for a dead peer therefore ends within ~10^4 polls of the host raising the
// abort word (microseconds to milliseconds), and by itself once the deadline
// passes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/engine/interpreter.h"
#include "kernels/engine/launch.h"
#include "kernels/engine/ll.h"
#include "kernels/engine/sync.h"
#include "kernels/host_device.h"

namespace braid::kernels::engine {

inline constexpr uint32_t kPollsPerCheck = 64;
/// Polls between two reads of the abort and fault words: a multiple of kPollsPerCheck.
inline constexpr uint32_t kPollsPerAbortCheck = 8192;
/// Polls after which a waiter backs off between checks (sync.h backOff).
inline constexpr uint32_t kPollsBeforeBackOff = 1024;
/// Polls after which a wait is long enough to tell the flight recorder about (a write to
/// pinned host memory that the next system fence must drain: the short waits of a fast
/// collective never pay it).
inline constexpr uint32_t kPollsBeforeNote = kPollsBeforeBackOff;

/// A wait's note for no one.
struct NoNote {
  BRAID_HOST_DEVICE void operator()(uint64_t) const {}
};

/// Polls ready() until it holds; the fault names `peer`, the rank waited for. Once the wait
/// has lasted kPollsBeforeNote polls, note(start) says so (start: clockNs() when it began), and
/// the result's `noted` is set.
template <typename Ready, typename Note = NoNote>
BRAID_HOST_DEVICE Fault waitUntil(const EngineArgs& args, Ready ready, int peer,
                                  Note note = NoNote{}, bool* noted = nullptr) {
  if (ready()) return noFault();
  const uint64_t start = clockNs();
  for (uint32_t polls = 1;; ++polls) {
    spinPause();
    if (ready()) return noFault();
    if (polls % kPollsPerCheck != 0) continue;
    if (polls == kPollsBeforeNote) {
      note(start);
      if (noted != nullptr) *noted = true;
    }
    if (polls % kPollsPerAbortCheck == 0) {
      if (loadRelaxed(args.abortFlag) != 0) return {FaultCode::kAborted, peer, 0, 0};
      // Another block of this launch gave up: the rank's calls cannot finish.
      if (loadRelaxed(&args.fault->code) != 0) return {FaultCode::kAborted, peer, 0, 0};
    }
    const uint64_t waited = clockNs() - start;
    if (args.timeoutNs != 0 && waited > args.timeoutNs) {
      return {FaultCode::kTimedOut, peer, waited, args.timeoutNs};
    }
    if (polls >= kPollsBeforeBackOff) backOff();
  }
}

/// Why a wait that another thread of the team gave up on ended.
BRAID_HOST_DEVICE Fault whyStopped(const EngineArgs& args, int peer) {
  if (loadRelaxed(args.abortFlag) != 0) return {FaultCode::kAborted, peer, 0, 0};
  if (loadRelaxed(&args.fault->code) != 0) return {FaultCode::kAborted, peer, 0, 0};
  return {FaultCode::kTimedOut, peer, args.timeoutNs, args.timeoutNs};
}

/// Every thread of the team waits for its share of the `n` cells at `cells`
/// to carry `flag`, and writes their data to words[i]. The fault is the same
/// on every thread; the team's barrier at the end makes `words` whole.
template <typename Team>
BRAID_HOST_DEVICE Fault unpackLlCells(const Team& team, const EngineArgs& args,
                                      const uint64_t* cells, size_t n, uint32_t flag,
                                      uint32_t* words, int peer) {
  Fault mine = noFault();
  for (size_t i = team.rank(); i < n; i += team.size()) {
    uint64_t cell = 0;
    mine = waitUntil(
        args, [&] { return flagOf(cell = loadRelaxed(cells + i)) == flag; }, peer);
    if (failed(mine)) break;
    words[i] = dataOf(cell);
  }
  if (!team.any(failed(mine))) return noFault();
  return team.share(failed(mine) ? mine : whyStopped(args, peer));
}

/// Every thread of the team stores its share of the `n` cells at `cells`,
/// each `flag` with words[i], or 0 from `data` on (padding).
template <typename Team>
BRAID_HOST_DEVICE void packLlCells(const Team& team, uint64_t* cells, size_t n, size_t data,
                                   uint32_t flag, const uint32_t* words) {
  for (size_t i = team.rank(); i < n; i += team.size()) {
    storeRelaxed(cells + i, makeCell(flag, i < data ? words[i] : 0u));
  }
}

}  // namespace braid::kernels::engine
