// A rank's counts and their report (tally.h).
#include "soak/tally.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <sstream>

namespace braid::soak {

void Tally::note(const std::string& text, int shown) {
  if (static_cast<int>(notes.size()) < shown) notes.push_back(text);
}

void Tally::add(const Tally& other) {
  steps = std::max(steps, other.steps);  // every rank runs the same steps
  calls += other.calls;
  bytes += other.bytes;
  wrong += other.wrong;
  errors += other.errors;
  seconds = std::max(seconds, other.seconds);
  for (int c = 0; c < kNumCollectives; ++c) perCollective[c] += other.perCollective[c];
}

std::string Tally::summary(const std::string& who, int ranks) const {
  char perRank[64] = "";
  if (ranks > 1) snprintf(perRank, sizeof perRank, " (%" PRIu64 " per rank)", calls / ranks);
  char text[320];
  snprintf(text, sizeof text,
           "%s: %" PRIu64 " steps, %" PRIu64 " calls%s, %.3f GB (%" PRIu64 " B), %" PRIu64
           " wrong results, %" PRIu64 " errors, %.1f s",
           who.c_str(), steps, calls, perRank, bytes / 1e9, bytes, wrong, errors, seconds);
  return text;
}

std::string Tally::byCollective() const {
  std::string s;
  for (int c = 0; c < kNumCollectives; ++c) {
    if (!s.empty()) s += ", ";
    s += std::string(collectiveName(static_cast<Collective>(c))) + " " +
         std::to_string(perCollective[c]);
  }
  return s;
}

// One line of counts, then one note per line: a note's own line breaks travel as the unit
// separator (0x1f), which no description contains.
std::string Tally::serialize() const {
  std::ostringstream out;
  out << steps << ' ' << calls << ' ' << bytes << ' ' << wrong << ' ' << errors << ' ' << seconds;
  for (uint64_t c : perCollective) out << ' ' << c;
  out << '\n';
  for (std::string n : notes) {
    for (size_t at = n.find('\n'); at != std::string::npos; at = n.find('\n', at)) {
      n.replace(at, 1, "\x1f");
    }
    out << n << '\n';
  }
  return out.str();
}

bool Tally::parse(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) return false;
  std::istringstream counts(line);
  counts >> steps >> calls >> bytes >> wrong >> errors >> seconds;
  for (uint64_t& c : perCollective) counts >> c;
  if (!counts) return false;
  notes.clear();
  while (std::getline(in, line)) {
    for (char& ch : line) {
      if (ch == '\x1f') ch = '\n';
    }
    notes.push_back(line);
  }
  return true;
}

}  // namespace braid::soak
