// parseAlgSelection (alg_selection.h).
#include "tune/alg_selection.h"

#include <cctype>
#include <vector>

#include "tune/select.h"

namespace braid::tune {
namespace {

using algo::Algorithm;
using algo::Protocol;

constexpr uint32_t simpleOf(Algorithm a) { return pairBit(a, Protocol::kSimple); }
constexpr uint32_t llOf(Algorithm a) { return pairBit(a, Protocol::kLl); }

// A name an expression may select, and braid's pairs it stands for (0: one braid lacks).
struct Name {
  const char* name;
  uint32_t pairs;
};

// NCCL 2.32's selectable names (its ncclCollConfig_t documentation), and braid's one-shot.
const std::vector<Name>& names() {
  static const std::vector<Name> kNames = {
      {"RING_LL", llOf(Algorithm::kRing)},
      {"RING_LL128", 0},
      {"RING_SIMPLE", simpleOf(Algorithm::kRing)},
      {"TREE_LL", llOf(Algorithm::kTree)},
      {"TREE_LL128", 0},
      {"TREE_SIMPLE", simpleOf(Algorithm::kTree)},
      {"ONESHOT", simpleOf(Algorithm::kOneShot) | llOf(Algorithm::kOneShot)},
      {"COLLNET_DIRECT_SIMPLE", 0},
      {"COLLNET_CHAIN_SIMPLE", 0},
      {"NVLS_SIMPLE", 0},
      {"NVLSTREE_SIMPLE", 0},
      {"PAT_SIMPLE", 0},
      {"SYMK_AGxLL_R", 0},
      {"SYMK_AGxLLMC_R", 0},
      {"SYMK_RSxTmaLD_AGxTmaST", 0},
      {"SYMK_RSxLD_AGxST", 0},
      {"SYMK_RSxLDMC_AGxSTMC", 0},
      {"SYMK_LL", 0},
      {"SYMK_LLMC", 0},
      {"SYMK_TmaST", 0},
      {"SYMK_ST", 0},
      {"SYMK_TmaSTMC", 0},
      {"SYMK_STMC", 0},
      {"SYMK_RailRing_LsaSTMC", 0},
      {"SYMK_TmaLD", 0},
      {"SYMK_LD", 0},
      {"SYMK_LDMC", 0},
      {"SYMK_RailA2A_LsaLD", 0},
      {"SYMK_RailA2A_LsaLDMC", 0},
  };
  return kNames;
}

// A set of names, bit i for names()[i].
using NameSet = uint64_t;

NameSet everyName() { return (NameSet{1} << names().size()) - 1; }

std::string stripBlanks(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

bool nameBeginsWith(const char* name, const std::string& word) {
  for (size_t i = 0; i < word.size(); ++i) {
    if (name[i] == '\0') return false;
    if (std::tolower(static_cast<unsigned char>(name[i])) !=
        std::tolower(static_cast<unsigned char>(word[i]))) {
      return false;
    }
  }
  return true;
}

std::vector<std::string> splitAt(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(separator, start);
    parts.push_back(stripBlanks(text.substr(start, at - start)));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

// One word, perhaps after '^': the names it begins, or those it does not.
Result<NameSet> selectWord(const std::string& text, const std::string& where) {
  const bool negated = !text.empty() && text[0] == '^';
  const std::string word = stripBlanks(negated ? text.substr(1) : text);
  if (word.empty()) return invalidArgument(where + "an operator has no name beside it");
  NameSet set = 0;
  for (size_t i = 0; i < names().size(); ++i) {
    if (nameBeginsWith(names()[i].name, word)) set |= NameSet{1} << i;
  }
  if (set == 0) {
    return invalidArgument(where + "no algorithm name begins with '" + word +
                           "' (names: RING_*, TREE_*, ONESHOT, and NCCL's COLLNET_*, NVLS*, "
                           "PAT_SIMPLE, SYMK_*)");
  }
  return negated ? everyName() & ~set : set;
}

std::string describeNames(NameSet set) {
  std::string out;
  for (size_t i = 0; i < names().size(); ++i) {
    if ((set >> i & 1) != 0) out += (out.empty() ? "" : ", ") + std::string(names()[i].name);
  }
  return out.empty() ? "nothing" : out;
}

}  // namespace

Result<uint32_t> parseAlgSelection(const std::string& text) {
  if (stripBlanks(text).empty()) return 0u;
  const std::string where = "algSelection \"" + text + "\": ";
  NameSet selected = 0;
  for (const std::string& term : splitAt(text, ',')) {
    NameSet both = everyName();
    for (const std::string& part : splitAt(term, '+')) {
      BRAID_ASSIGN_OR_RETURN(const NameSet one, selectWord(part, where));
      both &= one;
    }
    selected |= both;
  }
  uint32_t pairs = 0;
  for (size_t i = 0; i < names().size(); ++i) {
    if ((selected >> i & 1) != 0) pairs |= names()[i].pairs;
  }
  if (pairs == 0) {
    return invalidArgument(where + "selects " + describeNames(selected) +
                           ", none of which braid implements (it has RING_SIMPLE, RING_LL, "
                           "TREE_SIMPLE, TREE_LL and ONESHOT)");
  }
  return pairs;
}

}  // namespace braid::tune
