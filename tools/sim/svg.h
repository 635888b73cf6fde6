// Draws a simulated schedule of a few ranks as SVG: time runs to the right,
// each rank has a lane (split per channel), each step is a box coloured by
// what it does, and each message is an arrow from the step that sent it to
// the step that received it.
#pragma once

#include <string>

#include "event_sim.h"

namespace braid::sim {

/// Most ranks a drawing shows: beyond that the lanes are too thin to read.
inline constexpr int kMaxDrawnRanks = 16;

struct SvgOptions {
  std::string title;     ///< first line of the heading
  std::string subtitle;  ///< second line (machine, size)
};

/// The SVG document for `timing` (simulated with TimingOptions::trace) of
/// `nranks` ranks of `nchannels` channels each.
std::string drawSchedule(int nranks, int nchannels, const TimingResult& timing,
                         const SvgOptions& options);

}  // namespace braid::sim
