#include "algo/algorithm.h"

namespace braid::algo {

const char* algorithmName(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kOneShot:
      return "oneshot";
  }
  return "unknown";
}

const char* protocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kSimple:
      return "simple";
    case Protocol::kLl:
      return "ll";
  }
  return "unknown";
}

}  // namespace braid::algo
