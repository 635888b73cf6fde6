#include "diagnosis.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace braid::doctor {
namespace {

std::string ms(double v) {
  char text[32];
  snprintf(text, sizeof(text), "%.0f ms", v);
  return text;
}

std::string rankList(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += i + 1 == ranks.size() ? " and " : ", ";
    out += std::to_string(ranks[i]);
  }
  return out;
}

/// Where one rank is, as the doctor reasons about it.
struct Place {
  const RankDump* dump = nullptr;   ///< null: no dump from this rank
  const DumpCall* stuck = nullptr;  ///< the oldest call in flight (or the last, failed one)
  const DumpWait* wait = nullptr;   ///< its first wait in that call
  DumpWait fromError;               ///< a failed call's wait, read from its error
  bool lost = false;                ///< another rank's dump says it is lost
};

bool mentionsLost(const std::vector<RankDump>& dumps, int rank) {
  const std::string who = "rank " + std::to_string(rank) + " ";
  for (const RankDump& d : dumps) {
    for (const std::string& l : d.lost) {
      if (l.compare(0, who.size(), who) == 0) return true;
    }
  }
  return false;
}

std::string describePlace(int rank, const Place& p) {
  std::string line = "rank " + std::to_string(rank) + ": ";
  if (p.dump == nullptr) {
    return line + (p.lost ? "lost (its peers say so), no dump" : "no dump");
  }
  if (p.stuck == nullptr) {
    const DumpCall* last = p.dump->calls.empty() ? nullptr : &p.dump->calls.back();
    line += last == nullptr ? "idle, no call made yet"
                            : "idle after call " + std::to_string(last->seq) + " (" + last->what +
                                  ", " + last->state + ")";
    return line + (p.lost ? "; lost, say its peers" : "");
  }
  line += std::string(p.stuck->state == "failed" ? "failed in call " : "in call ") +
          std::to_string(p.stuck->seq) + " (" + p.stuck->what + ", " + p.stuck->how + ") after " +
          ms(p.stuck->ms);
  if (p.wait == &p.fromError) {
    line += ", which gave up waiting for rank " + std::to_string(p.wait->peer);
  } else if (p.wait != nullptr) {
    line += ", waiting " + ms(p.wait->ms) + " for rank " + std::to_string(p.wait->peer) + " (" +
            (p.wait->recv ? "to receive" : "for room to send") + ", channel " +
            std::to_string(p.wait->channel) + ")";
  } else {
    line += ", not waiting (busy, or its waits are not noted)";
  }
  return line;
}

/// Why the chain ended at the rank of `p`, as seen from a waiter in call `seq`.
std::string whyThere(const Place& p, uint64_t seq) {
  if (p.dump == nullptr) {
    return p.lost ? "it is lost"
                  : "it left no dump (is it alive? did it make call " + std::to_string(seq) + "?)";
  }
  if (p.lost) return "it is lost";
  if (p.stuck == nullptr) {
    const uint64_t last = p.dump->calls.empty() ? 0 : p.dump->calls.back().seq;
    return "it is idle after call " + std::to_string(last) + ": it has not made call " +
           std::to_string(seq);
  }
  if (p.stuck->seq != seq) {
    return "it is inside call " + std::to_string(p.stuck->seq) + " (" + p.stuck->what +
           "), not call " + std::to_string(seq);
  }
  return "it is inside call " + std::to_string(seq) + " but not waiting: busy or slow";
}

}  // namespace

Diagnosis diagnose(const std::vector<RankDump>& dumps) {
  Diagnosis d;
  const int n = dumps.empty() ? 0 : dumps.front().nranks;
  std::vector<Place> places(n);
  for (const RankDump& dump : dumps) {
    if (dump.rank < 0 || dump.rank >= n) continue;
    Place& p = places[dump.rank];
    p.dump = &dump;
    p.stuck = dump.stuckCall();
    if (p.stuck != nullptr) {
      for (const DumpWait& w : dump.waits) {
        if (w.seq == p.stuck->seq && w.peer >= 0 && w.peer < n) {
          p.wait = &w;
          break;
        }
      }
      const int peer = dump.failedWaitingFor(p.stuck->seq);
      if (p.wait == nullptr && peer >= 0 && peer < n) {
        p.fromError.seq = p.stuck->seq;
        p.fromError.peer = peer;
        p.fromError.ms = p.stuck->ms;
        p.wait = &p.fromError;
      }
    }
  }
  for (int r = 0; r < n; ++r) places[r].lost = mentionsLost(dumps, r);
  for (int r = 0; r < n; ++r) d.ranks.push_back(describePlace(r, places[r]));

  // Follow each waiting rank's edges to where they end.
  std::map<int, std::vector<int>> endsAt;  // culprit -> the waiting ranks whose chain ends there
  std::vector<int> inCycles;
  std::set<uint64_t> stuckSeqs;
  for (int r = 0; r < n; ++r) {
    if (places[r].wait == nullptr) continue;
    stuckSeqs.insert(places[r].stuck->seq);
    std::set<int> seen{r};
    int at = places[r].wait->peer;
    while (places[at].wait != nullptr && places[at].stuck->seq == places[r].stuck->seq &&
           !places[at].lost && seen.insert(at).second) {
      at = places[at].wait->peer;
    }
    if (places[at].wait != nullptr && places[at].stuck->seq == places[r].stuck->seq &&
        !places[at].lost) {
      inCycles.push_back(r);
    } else {
      endsAt[at].push_back(r);
    }
  }
  if (endsAt.empty() && inCycles.empty()) {
    d.verdict =
        "no rank waits for another inside a call: nothing hangs in braid's calls "
        "(the job may wait somewhere else)";
    return d;
  }
  if (endsAt.empty()) {
    d.verdict = "ranks " + rankList(inCycles) +
                " all wait for each other inside one call, none of them idle: the ranks may "
                "have made different calls (try BRAID_CHECK_CALLS=1), or the link between them "
                "is stalled";
    return d;
  }
  auto most = std::max_element(endsAt.begin(), endsAt.end(), [](const auto& a, const auto& b) {
    return a.second.size() < b.second.size();
  });
  d.culprit = most->first;
  const uint64_t seq = places[most->second.front()].stuck->seq;
  std::vector<int> waiters = most->second;
  d.verdict = "rank " + std::to_string(d.culprit) +
              " is the one the others wait for: " + (waiters.size() == 1 ? "rank " : "ranks ") +
              rankList(waiters) + " wait for it in call " + std::to_string(seq) +
              ", directly or through a rank that does; " + whyThere(places[d.culprit], seq);
  return d;
}

std::string report(const std::vector<RankDump>& dumps, const Diagnosis& d) {
  std::string out;
  if (dumps.empty()) return "braid-doctor: no dumps\n";
  std::vector<int> have;
  for (const RankDump& dump : dumps) have.push_back(dump.rank);
  std::sort(have.begin(), have.end());
  out += "communicator " + dumps.front().comm + ", " + std::to_string(dumps.front().nranks) +
         " ranks, dumps from " + (have.size() == 1 ? "rank " : "ranks ") + rankList(have) + "\n";
  for (const std::string& line : d.ranks) out += "  " + line + "\n";
  out += "verdict: " + d.verdict + "\n";
  return out;
}

}  // namespace braid::doctor
