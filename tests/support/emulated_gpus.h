// Whether this test process was asked to run on emulated GPUs: ctest sets BRAID_EMULATE_GPUS=4
// for the emulated-gpu binaries (tests/CMakeLists.txt). There a missing device means that the
// emulation failed to come up, and a test that needs one must fail, never skip.
#pragma once

#include <cstdlib>
#include <string>

namespace braid::testing {

/// The number of emulated GPUs BRAID_EMULATE_GPUS asks for (0 where it is unset).
inline int emulatedGpusAsked() {
  const char* value = std::getenv("BRAID_EMULATE_GPUS");
  return value == nullptr ? 0 : std::atoi(value);
}

/// Why a test fails that found `have` devices where BRAID_EMULATE_GPUS asked for more.
inline std::string emulatedGpusMissing(int have) {
  return "BRAID_EMULATE_GPUS=" + std::to_string(emulatedGpusAsked()) + " but the runtime shows " +
         std::to_string(have) + " device(s): the emulated GPU did not come up";
}

}  // namespace braid::testing
