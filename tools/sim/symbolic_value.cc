#include "symbolic_value.h"

namespace braid::sim {
namespace {

uint64_t splitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A key uniform enough in [1, p): 61 random bits, rejecting the two values
// outside the range (0 and p itself would make a rank's contribution vanish).
uint64_t drawKey(uint64_t& state) {
  for (;;) {
    const uint64_t k = splitMix64(state) >> 3;
    if (k != 0 && k < kDigestPrime) return k;
  }
}

}  // namespace

RankKeys::RankKeys(int nranks, uint64_t seed) : k1_(nranks), k2_(nranks) {
  uint64_t state = seed;
  all_ = Contributions{0, 0, 0};
  for (int r = 0; r < nranks; ++r) {
    k1_[r] = drawKey(state);
    k2_[r] = drawKey(state);
    all_ = reduceContributions(all_, single(r));
  }
}

}  // namespace braid::sim
