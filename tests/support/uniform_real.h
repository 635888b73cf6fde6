// Uniform real numbers for tests' random inputs, without std::uniform_real_distribution:
// libstdc++'s generate_canonical, under it, takes two long double logarithms on every draw, and
// filling the inputs of an 8-rank all_reduce test spent 58% of its CPU time there (perf, under
// ASan).
#pragma once

#include <cstdint>
#include <random>

namespace braid::testing {

/// Uniform in [lo, hi), from one draw of a 64-bit engine (its top 53 bits).
inline double uniformReal(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * (static_cast<double>(rng() >> 11) * 0x1.0p-53);
}

/// Uniform in [lo, hi), from two draws of a 32-bit engine.
inline double uniformReal(std::mt19937& rng, double lo, double hi) {
  const uint64_t high = rng();
  const uint64_t bits = (high << 32 | rng()) >> 11;
  return lo + (hi - lo) * (static_cast<double>(bits) * 0x1.0p-53);
}

}  // namespace braid::testing
