// Parsing braid-soak's command line (options.h).
#include "soak/options.h"

#include <cstdlib>
#include <cstring>

#include "soak/plan.h"

namespace braid::soak {
namespace {

const char kUsage[] =
    "usage: braid-soak [options]\n"
    "  --seconds S        run steps for S seconds                         [30]\n"
    "  --seed N           the plan's seed (every rank draws the same calls) [random]\n"
    "  --procs N          fork N processes as ranks (ignored under mpirun)  [4]\n"
    "  --memory M         host, gpu or mixed: the communicators' memory      [host]\n"
    "  --emulate-gpus N   run GPU communicators on braid's emulated GPU of N devices\n"
    "  --max-bytes B      the largest buffer of one call per rank (K/M suffix) [4M]\n"
    "  --max-group N      calls in one group at most (1: no groups)          [4]\n"
    "  --first N          start at step N (with --steps 1: repeat one step)  [0]\n"
    "  --steps N          stop after N steps (0: when the time is up)        [0]\n"
    "  --collectives L    run only these (comma-separated: all_reduce, reduce_scatter,\n"
    "                     all_gather, broadcast, bcast, reduce, sendrecv, gather, scatter,\n"
    "                     alltoall, all_gatherv, reduce_scatterv, alltoallv); the plan is\n"
    "                     drawn as without it, the other calls are left out\n"
    "  --shown N          mismatches and errors described per rank           [5]\n"
    "  --verbose          print every step before it runs\n"
    "  --corrupt-every N  the last rank flips a byte of every N-th call's buffers after the\n"
    "                     call: the run must then report wrong results (checks the check)\n"
    "Under mpirun (OMPI_COMM_WORLD_*), srun or a torchrun-style environment it runs as one\n"
    "rank of that job instead of forking.\n";

// Memory's values in order.
const char* const kMemoryNames[] = {"host", "gpu", "mixed"};

bool parseUnsigned(const char* text, uint64_t* out) {
  if (text == nullptr || *text == '\0' || *text == '-') return false;
  char* end = nullptr;
  const unsigned long long v = strtoull(text, &end, 0);
  uint64_t scale = 1;
  if (*end == 'K' || *end == 'k') scale = 1 << 10;
  if (*end == 'M' || *end == 'm') scale = 1 << 20;
  if (scale != 1) ++end;
  if (*end != '\0') return false;
  *out = v * scale;
  return true;
}

}  // namespace

const char* memoryName(Memory m) { return kMemoryNames[static_cast<int>(m)]; }

bool parseOptions(int argc, char** argv, Options* out, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      *error = kUsage;
      return false;
    }
    if (flag == "--verbose") {
      out->verbose = true;
      continue;
    }
    const char* value = i + 1 < argc ? argv[++i] : nullptr;
    uint64_t n = 0;
    const bool number = parseUnsigned(value, &n);
    bool ok = number;
    if (flag == "--seconds") {
      char* end = nullptr;
      out->seconds = value ? strtod(value, &end) : -1;
      ok = value && *end == '\0' && out->seconds >= 0;
    } else if (flag == "--seed") {
      out->seed = n;
      out->seedGiven = true;
    } else if (flag == "--procs") {
      out->procs = static_cast<int>(n);
      ok = ok && n >= 1 && n <= 16;  // the reference reduces over 16 ranks at most
    } else if (flag == "--memory") {
      ok = false;
      for (int m = 0; m < 3 && value != nullptr; ++m) {
        if (strcmp(value, kMemoryNames[m]) != 0) continue;
        out->memory = static_cast<Memory>(m);
        ok = true;
      }
    } else if (flag == "--emulate-gpus") {
      out->emulateGpus = static_cast<int>(n);
      ok = ok && n >= 1 && n <= 64;
    } else if (flag == "--max-bytes") {
      out->maxBytes = n;
      ok = ok && n >= 64;
    } else if (flag == "--max-group") {
      out->maxGroup = static_cast<int>(n);
      ok = ok && n >= 1 && n <= 64;
    } else if (flag == "--first") {
      out->firstStep = n;
    } else if (flag == "--steps") {
      out->steps = n;
    } else if (flag == "--corrupt-every") {
      out->corruptEvery = n;
    } else if (flag == "--shown") {
      out->shown = static_cast<int>(n);
    } else if (flag == "--collectives") {
      ok = value != nullptr && parseCollectives(value, &out->collectives, error);
      if (!ok) {
        if (value == nullptr) *error = "--collectives needs a list";
        return false;
      }
    } else {
      *error = "unknown option " + flag + "\n" + kUsage;
      return false;
    }
    if (!ok) {
      *error = "bad value for " + flag + ": " + (value ? value : "(none)") + "\n" + kUsage;
      return false;
    }
  }
  return true;
}

}  // namespace braid::soak
