// braid-soak: random collectives on several processes, every output checked, for a set time.
//
// Each step draws (plan.h) one call or a group of calls: any of NCCL's collectives and braid's
// v-collectives, any datatype, operator (premulsum included), count from 0 to a few MiB, root,
// placement, and one of the communicators made up front with different algorithms, protocols,
// channels and FIFO sizes, on host memory or on a GPU (comms.h). Every rank draws the same
// steps from the seed and checks every byte of its own buffers against what the inputs (a
// function of the seed, the call, the rank and the index) make it (call_run.h). At the end
// each rank's counts, its first mismatches and errors, and the total are printed; the exit
// code is 1 on any wrong result or error. Linked with libnccl.so.2 through the C API only.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "perf/launch.h"
#include "soak/launcher.h"
#include "soak/options.h"

int main(int argc, char** argv) {
  using braid::soak::Options;
  Options o;
  std::string error;
  if (!braid::soak::parseOptions(argc, argv, &o, &error)) {
    fprintf(stderr, "%s%s", error.c_str(), error.empty() || error.back() != '\n' ? "\n" : "");
    return 2;
  }
  // Every blocking wait of braid ends by this deadline, so a lost or stuck peer shows up as an
  // error within two minutes rather than at braid's default of ten.
  setenv("BRAID_TIMEOUT_MS", "120000", /*overwrite=*/0);
  if (o.emulateGpus > 0) setenv("BRAID_EMULATE_GPUS", std::to_string(o.emulateGpus).c_str(), 1);
  braid::perf::LaunchInfo launch;
  if (!braid::perf::detectLauncher(&launch, &error)) {
    fprintf(stderr, "braid-soak: %s\n", error.c_str());
    return 2;
  }
  if (launch.launched) {
    if (!o.seedGiven) {
      // The ranks of a launcher's job have no parent to draw one seed for them all.
      fprintf(stderr, "braid-soak: under a launcher every rank needs the same --seed\n");
      return 2;
    }
    return braid::soak::runJoined(o, launch.procRank, launch.nprocs);
  }
  if (!o.seedGiven) o.seed = (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  return braid::soak::runForked(o);
}
