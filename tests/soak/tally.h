// What one rank of the soak counted, and the lines that report it. A forked rank sends its
// tally to the launcher as text (serialize / parse), which prints the ranks in order and their
// total.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "soak/plan.h"

namespace braid::soak {

struct Tally {
  uint64_t steps = 0;
  uint64_t calls = 0;
  uint64_t bytes = 0;   ///< sum over calls of the largest buffer this rank passed
  uint64_t wrong = 0;   ///< calls with at least one wrong byte or element on this rank
  uint64_t errors = 0;  ///< calls (or group ends) that returned an error
  uint64_t perCollective[kNumCollectives] = {};
  std::vector<std::string> notes;  ///< the first mismatches and errors, described
  double seconds = 0;              ///< how long the steps ran

  /// Keeps `note` when fewer than `shown` are kept.
  void note(const std::string& text, int shown);
  void add(const Tally& other);

  /// "rank 2: 1234 steps, 1600 calls, 2.100 GB (2100000000 B), 0 wrong results, 0 errors,
  /// 30.2 s"; for a total over `ranks` ranks the calls read "6400 calls (1600 per rank)".
  std::string summary(const std::string& who, int ranks = 1) const;
  /// "all_reduce 400, reduce_scatter 120, ...".
  std::string byCollective() const;

  std::string serialize() const;
  bool parse(const std::string& text);
};

}  // namespace braid::soak
