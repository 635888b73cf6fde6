#include "tune/select.h"

#include <cctype>
#include <optional>
#include <vector>

namespace braid::tune {
namespace {

using algo::Algorithm;
using algo::Protocol;

// Tries every allowed protocol of `algorithm` and keeps the fastest in `best`.
Status considerProtocols(const Model& model, const Query& query, const Allowed& allowed,
                         Algorithm algorithm, std::optional<Choice>& best) {
  for (int p = 0; p < algo::kNumProtocols; ++p) {
    const auto protocol = static_cast<Protocol>(p);
    if (!allowed.protocol[p] || (allowed.pairs & pairBit(algorithm, protocol)) == 0) continue;
    BRAID_ASSIGN_OR_RETURN(const double us, predictUs(model, query, algorithm, protocol));
    if (!best || us < best->predictedUs) best = Choice{algorithm, protocol, us, false};
  }
  return Status::success();
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The names one variable takes: those braid implements (index = enumerator)
// and those NCCL has that braid does not.
struct Vocabulary {
  const char* variable;  ///< "BRAID_ALGO/NCCL_ALGO"
  const char* kind;      ///< "algorithm"
  std::vector<std::string> implemented;
  std::vector<std::string> ncclOnly;
};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Parses one list into `allowed` (one flag per implemented name).
Status parseList(const std::string& text, const Vocabulary& v, bool* allowed) {
  const size_t count = v.implemented.size();
  const std::string where = std::string(v.variable) + "=\"" + text + "\": ";
  std::string list = lower(trim(text));
  if (list.empty()) {
    for (size_t i = 0; i < count; ++i) allowed[i] = true;
    return Status::success();
  }
  if (list.find_first_of(":;") != std::string::npos) {
    return invalidUsage(where +
                        "per-collective lists (collective:names;...) are not supported by "
                        "braid; give one list for every collective");
  }
  const bool exclude = list[0] == '^';
  if (exclude) list.erase(0, 1);
  std::vector<bool> named(count, false);
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    const std::string name = trim(list.substr(start, comma - start));
    if (name.empty()) return invalidArgument(where + "empty " + v.kind + " name in the list");
    bool known = false;
    for (size_t i = 0; i < count; ++i) {
      if (name == v.implemented[i]) named[i] = known = true;
    }
    for (const auto& other : v.ncclOnly) {
      if (name != lower(other)) continue;
      known = true;
      if (!exclude) {
        return invalidUsage(where + "braid does not implement the " + v.kind + " " + other +
                            " (it has " + joined(v.implemented) + ")");
      }
    }
    if (!known) {
      return invalidArgument(where + "unknown " + v.kind + " '" + name + "' (braid has " +
                             joined(v.implemented) + ")");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  bool any = false;
  for (size_t i = 0; i < count; ++i) {
    allowed[i] = named[i] != exclude;
    any = any || allowed[i];
  }
  if (!any) return invalidArgument(where + "leaves no " + v.kind + " to run");
  return Status::success();
}

}  // namespace

Result<Choice> choose(const Model& model, const Query& query, const Allowed& allowed) {
  std::optional<Choice> best;
  for (int a = 0; a < algo::kNumAlgorithms; ++a) {
    const auto algorithm = static_cast<Algorithm>(a);
    if (!allowed.algorithm[a] || !supports(algorithm, query)) continue;
    if (algorithm == Algorithm::kOneShot && query.bytes > allowed.oneShotMaxBytes) continue;
    BRAID_TRY(considerProtocols(model, query, allowed, algorithm, best));
  }
  if (best) return *best;
  // Nothing allowed runs this collective: the ring runs them all.
  Allowed ring = allowed;
  ring.pairs = ~0u;  // a call's own pairs left nothing: the fallback may take any
  bool anyProtocol = false;
  for (bool p : allowed.protocol) anyProtocol = anyProtocol || p;
  if (!anyProtocol) ring.protocol[static_cast<int>(Protocol::kSimple)] = true;
  BRAID_TRY(considerProtocols(model, query, ring, Algorithm::kRing, best));
  if (!best) return internalError("selector: the ring fallback found no protocol");
  best->fellBack = true;
  return *best;
}

Result<Allowed> parseAllowed(const std::string& algorithms, const std::string& protocols) {
  static const Vocabulary kAlgorithms{"BRAID_ALGO/NCCL_ALGO",
                                      "algorithm",
                                      {"ring", "tree", "oneshot"},
                                      {"CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT"}};
  static const Vocabulary kProtocols{
      "BRAID_PROTO/NCCL_PROTO", "protocol", {"simple", "ll"}, {"LL128"}};
  Allowed allowed;
  BRAID_TRY(parseList(algorithms, kAlgorithms, allowed.algorithm));
  BRAID_TRY(parseList(protocols, kProtocols, allowed.protocol));
  return allowed;
}

std::string describeAllowed(const Allowed& allowed) {
  std::string algorithms;
  for (int a = 0; a < algo::kNumAlgorithms; ++a) {
    if (!allowed.algorithm[a]) continue;
    algorithms += (algorithms.empty() ? "" : ",");
    algorithms += algo::algorithmName(static_cast<Algorithm>(a));
  }
  std::string protocols;
  for (int p = 0; p < algo::kNumProtocols; ++p) {
    if (!allowed.protocol[p]) continue;
    protocols += (protocols.empty() ? "" : ",");
    protocols += algo::protocolName(static_cast<Protocol>(p));
  }
  return "algorithms " + (algorithms.empty() ? std::string("none") : algorithms) + " protocols " +
         (protocols.empty() ? std::string("none") : protocols) + " one-shot up to " +
         std::to_string(allowed.oneShotMaxBytes) + " B";
}

}  // namespace braid::tune
