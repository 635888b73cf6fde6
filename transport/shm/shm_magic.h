// The first word of each kind of shared-memory FIFO segment, so that
// opening the wrong kind (ranks run with different BRAID_PROTO) fails with
// a message instead of waiting for a FIFO that will never look ready. A new
// segment is all zeros and its creator stores the magic last, so 0 means
// "not set up yet" and any other word that is not the opener's is an error.
#pragma once

#include <cstdint>

namespace braid::transport::shm {

inline constexpr uint64_t kSimpleFifoMagic = 0x4649464449415242ull;  // "BRAIDFIF", little-endian
inline constexpr uint64_t kLlFifoMagic = 0x314c4c4449415242ull;      // "BRAIDLL1", little-endian
static_assert(kSimpleFifoMagic != kLlFifoMagic,
              "the two FIFOs must not be mistaken for each other");

}  // namespace braid::transport::shm
