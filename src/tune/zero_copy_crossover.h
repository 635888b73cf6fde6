// Where zero-copy starts to pay: the smallest message from which reading the
// peers' buffers in place (exec/zero_copy.h) measured at least as fast as the
// FIFOs. braid-calibrate measures both paths over a sweep of sizes and prints
// what this finds as the recommended BRAID_ZERO_COPY_MIN_BYTES
// (Config::zeroCopyMinBytes). Pure arithmetic over measured times, no I/O.
//
// The crossover is a suffix rule, not the first size zero-copy wins at: it is
// the smallest measured size S such that zero-copy was at least as fast at S
// and at every larger measured size. So one noisy zero-copy win below the
// real crossover does not pull the threshold down, and one noisy loss above it
// pushes the threshold up past that loss rather than sending a size that
// measured slower to zero-copy: the error is always on the FIFOs' side, and
// the medians of repeated sweeps (medianOf) are what keep such losses rare.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace braid::tune {

/// One measured size: the time of the call on the FIFOs and with zero-copy.
struct ZeroCopyPoint {
  size_t bytes = 0;
  double fifoUs = 0;
  double zeroCopyUs = 0;
};

/// The smallest measured size from which zero-copy was at least as fast
/// (zeroCopyUs <= fifoUs) at that size and every larger one; nullopt when it
/// lost at the largest (never faster, or a loss at the top of the range). The
/// order of `points` does not matter; sizes are taken as distinct.
std::optional<size_t> zeroCopyCrossover(std::vector<ZeroCopyPoint> points);

/// The median of `values` (the mean of the middle two for an even count); 0
/// for none.
double medianOf(std::vector<double> values);

}  // namespace braid::tune
