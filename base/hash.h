// A stable 64-bit hash (FNV-1a): the same in every process, build and run,
// unlike std::hash, so ranks can derive the same value independently.
#pragma once

#include <cstdint>
#include <string>

namespace braid {

inline uint64_t stableHash(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace braid
