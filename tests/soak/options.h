// braid-soak's command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace braid::soak {

/// Where the communicators' buffers live.
enum class Memory { kHost, kGpu, kMixed };

struct Options {
  double seconds = 30;  ///< how long the ranks run steps (after making their communicators)
  uint64_t seed = 0;
  bool seedGiven = false;  ///< else a random seed, printed
  int procs = 4;           ///< processes to fork; ignored under a launcher (mpirun)
  Memory memory = Memory::kHost;
  int emulateGpus = 0;         ///< > 0: BRAID_EMULATE_GPUS for the ranks
  size_t maxBytes = 4 << 20;   ///< the largest buffer a call passes, per rank
  int maxGroup = 4;            ///< calls in a group at most (1: no groups)
  uint64_t firstStep = 0;      ///< the step to start from (to repeat one)
  uint64_t steps = 0;          ///< > 0: stop after this many steps, whatever the time
  uint32_t collectives = ~0u;  ///< mask of the collectives to run (plan.h's order)
  int shown = 5;               ///< mismatches and errors described per rank
  bool verbose = false;        ///< each rank prints each step before running it
  /// > 0: the last rank flips a byte of every corruptEvery-th call's buffers after the call,
  /// so that the run must report wrong results (the check of the check).
  uint64_t corruptEvery = 0;
};

/// Parses argv; on error fills `error` and returns false. --help fills `error` with the usage.
bool parseOptions(int argc, char** argv, Options* out, std::string* error);

const char* memoryName(Memory m);

}  // namespace braid::soak
