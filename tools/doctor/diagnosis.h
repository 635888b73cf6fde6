// What the dumps of one communicator's ranks say together: for each rank where it is (in which
// call, waiting for whom, or idle after which call), and the verdict, the rank the others wait
// for.
//
// Every waiting rank's first wait is an edge to the rank it waits for. Following the edges from
// a waiting rank ends at a rank that is not waiting in that call: one that left no dump (gone,
// or never asked), one that is lost, one idle after an earlier call (it has not made this one),
// one inside another call, or one inside the call but busy. The rank most chains end at is the
// one everybody waits for. Edges that only come back to waiting ranks are a cycle: the ranks
// all wait on each other inside one call.
#pragma once

#include <string>
#include <vector>

#include "dump_reader.h"

namespace braid::doctor {

struct Diagnosis {
  std::vector<std::string> ranks;  ///< one line per rank, in rank order
  int culprit = -1;                ///< the rank the others wait for; -1 when none stands out
  std::string verdict;             ///< "rank 2 is the one the others wait for: ..."
};

/// The dumps must be of one communicator (same comm), at most one per rank.
Diagnosis diagnose(const std::vector<RankDump>& dumps);

/// The full report: a header line, the ranks' lines and the verdict.
std::string report(const std::vector<RankDump>& dumps, const Diagnosis& d);

}  // namespace braid::doctor
