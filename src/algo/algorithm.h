// The algorithms and protocols a collective can run with, named as
// BRAID_ALGO / BRAID_PROTO (and NCCL_ALGO / NCCL_PROTO) spell them.
//
// An algorithm decides which ranks talk to which and in what order (the
// Schedule); a protocol decides how one message crosses a connection:
// Simple writes the data and then a counter (best bandwidth), LL writes
// 8-byte lines that carry their own flag (half the bandwidth, one less
// round trip to notice the data).
#pragma once

#include <cstdint>
#include <string>

namespace braid::algo {

enum class Algorithm : uint8_t {
  kRing,     ///< ring: bandwidth-optimal, latency grows with N
  kTree,     ///< double binary tree: latency grows with log N
  kOneShot,  ///< every rank reads every peer's input (one host, tiny messages)
};
inline constexpr int kNumAlgorithms = 3;

enum class Protocol : uint8_t {
  kSimple,
  kLl,
};
inline constexpr int kNumProtocols = 2;

/// "ring", "tree", "oneshot"
const char* algorithmName(Algorithm algorithm);
/// "simple", "ll"
const char* protocolName(Protocol protocol);

}  // namespace braid::algo
