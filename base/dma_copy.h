// dmaCopy: a copy made the way a device's DMA meets the CPU, for the emulated devices.
//
// The emulated GPU's copy engine and the emulated HCA move bytes in and out of memory that
// other threads use at the same time on purpose, as they would on real hardware: a rank polls a
// flag or a credit a peer's NIC writes, a stream reads back ack words peers keep storing. The
// CPU side does so with atomic loads and stores; a plain memcpy on the emulated device's side
// would make each such meeting a data race in C++'s model (undefined, and a ThreadSanitizer
// report) where the hardware's is not. So the emulated devices copy with relaxed atomic
// accesses: 8-byte words where source and destination are aligned alike, bytes elsewhere. The
// order in which words land is unspecified, as it is for DMA; whoever needs an order gets it
// from a completion (a CQE, a stream synchronize), as on hardware.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid {

inline void dmaCopy(void* to, const void* from, size_t bytes) {
  auto* dst = static_cast<unsigned char*>(to);
  const auto* src = static_cast<const unsigned char*>(from);
  const bool wordsAlign =
      reinterpret_cast<uintptr_t>(dst) % 8 == reinterpret_cast<uintptr_t>(src) % 8;
  if (wordsAlign) {
    for (; bytes > 0 && reinterpret_cast<uintptr_t>(dst) % 8 != 0; --bytes) {
      __atomic_store_n(dst++, __atomic_load_n(src++, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    }
    for (; bytes >= 8; bytes -= 8, dst += 8, src += 8) {
      __atomic_store_n(reinterpret_cast<uint64_t*>(dst),
                       __atomic_load_n(reinterpret_cast<const uint64_t*>(src), __ATOMIC_RELAXED),
                       __ATOMIC_RELAXED);
    }
  }
  for (; bytes > 0; --bytes) {
    __atomic_store_n(dst++, __atomic_load_n(src++, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
  }
}

}  // namespace braid
