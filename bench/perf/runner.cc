// braid-perf's sweep and table: the sections (-d, -o, -r) one after another,
// each over the sizes -b .. -e, a row per size with its out-of-place and
// in-place cells (measure.h), as nccl-tests prints them, and with --model one
// more column, the cost model's estimate of the row's call.
#include "perf/runner.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "perf/collectives.h"
#include "perf/device.h"
#include "perf/measure.h"

namespace braid::perf {
namespace {

// The sections of the table, in nccl-tests' order: for each type, each
// operator (reducing collectives), each root (rooted collectives).
std::vector<Section> sectionsOf(const Options& o, int nranks) {
  const CollectiveSpec* spec = findCollective(o.collective);
  std::vector<ncclRedOp_t> ops = spec->hasOp ? o.ops : std::vector<ncclRedOp_t>{ncclSum};
  std::vector<int> roots{-1};
  if (spec->rooted && o.root >= 0) roots = {o.root};
  if (spec->rooted && o.root < 0) {
    roots.clear();
    for (int r = 0; r < nranks; ++r) roots.push_back(r);
  }
  std::vector<Section> sections;
  for (ncclDataType_t type : o.types) {
    for (ncclRedOp_t op : ops) {
      for (int root : roots) sections.push_back({spec, type, op, root});
    }
  }
  return sections;
}

double algbw(size_t bytes, const Measure& m) {
  return m.usec > 0 ? static_cast<double>(bytes) / m.usec / 1e3 : 0;
}

void printRow(const Options& o, const Section& s, size_t bytes, size_t count, int nranks,
              const Measure& outOfPlace, const Measure& inPlace) {
  printf("%12zu  %12zu  %8s  %6s  %6d", bytes, count, typeName(s.type),
         s.spec->hasOp ? opName(s.op) : "none", s.root);
  for (const Measure* m : {&outOfPlace, &inPlace}) {
    if (!m->ran) {
      printf("  %8s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
      continue;
    }
    char wrong[32];
    if (m->checked) {
      snprintf(wrong, sizeof(wrong), "%lld", m->wrong);
    } else {
      snprintf(wrong, sizeof(wrong), "N/A");
    }
    printf("  %8.2f  %6.2f  %6.2f  %6s", m->usec, algbw(bytes, *m),
           algbw(bytes, *m) * s.spec->busFactor(nranks), wrong);
  }
  // After nccl-tests' columns, so that what reads them by position still can.
  if (o.model) printf("  %8.2f", outOfPlace.modelUsec);
  printf("\n");
  fflush(stdout);
}

}  // namespace

void printHeader(const Options& o, int nranks, const int* pids, const int* devices) {
  printf("# braid-perf %s: nccl-tests compatible benchmark of braid's libnccl.so.2\n",
         o.collective.c_str());
  char step[64];
  if (o.stepFactor > 1) {
    snprintf(step, sizeof(step), "%g(factor)", o.stepFactor);
  } else {
    snprintf(step, sizeof(step), "%zu(bytes)", o.stepBytes);
  }
  printf(
      "# nThread %d nGpus %d minBytes %zu maxBytes %zu step: %s warmup iters: %d "
      "iters: %d agg iters: 1 validation: %d graph: 0\n",
      o.threads, o.gpus, o.minBytes, o.maxBytes, step, o.warmupIters, o.iters, o.check);
  printf("#\n# Using devices\n");
  const Device& d = Device::get();
  for (int r = 0; r < nranks; ++r) {
    if (devices[r] < 0) {
      printf("#  Rank %2d Group  0 Pid %6d on host memory (no GPU)\n", r, pids[r]);
    } else {
      printf("#  Rank %2d Group  0 Pid %6d on device %2d: %s\n", r, pids[r], devices[r],
             d.name(devices[r]).c_str());
    }
  }
  if (d.count() > 0) printf("#  devices through %s\n", d.kind());
  if (o.symmetricWindows) {
    printf("#\n# Buffers: ncclMemAlloc, registered as symmetric windows (-R 2): %d of %d ",
           nranks * 2 - std::max(o.nullWindows, 0), nranks * 2);
    if (o.nullWindows > 0) {
      printf("made; %d NULL: the library declined them, and those calls run without them\n",
             o.nullWindows);
    } else {
      printf("made\n");
    }
  }
  printf("#\n");
  if (o.model) {
    printf(
        "# model: ncclGroupSimulateEnd's estimate of each call (the cost model, docs/tuning.md)\n");
  }
  // The --model column's heading, on each heading line (nothing without it).
  auto model = [&](const char* text) {
    if (o.model && text[0] != '\0') printf("  %8s", text);
    printf("\n");
  };
  printf("# %10s  %12s  %8s  %6s  %6s  %30s  %30s", "", "", "", "", "", "out-of-place", "in-place");
  model("");
  printf("# %10s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s", "size", "count",
         "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
         "#wrong");
  model("model");
  printf("# %10s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s", "(B)", "(elements)",
         "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  model("(us)");
  fflush(stdout);
}

long long runBenchmark(const Options& o, ThreadRanks& ranks) {
  const int nranks = ranks.nranks();
  const std::vector<Section> sections = sectionsOf(o, nranks);
  long long totalWrong = 0;  // as braid's all-reduce added it up: the table's
  long long wrongHere = 0;   // as this thread's ranks counted it, each in its own output
  double busbwSum = 0;
  int cells = 0;
  for (int cycle = 0; cycle < o.cycles; ++cycle) {
    for (size_t i = 0; i < sections.size(); ++i) {
      const Section& s = sections[i];
      const size_t elem = typeSize(s.type);
      for (size_t bytes = o.minBytes; bytes <= o.maxBytes;) {
        const Geometry g = s.spec->geometry(bytes / elem, elem, nranks);
        const size_t size = std::max(g.sendCount, g.recvCount) * elem;
        Measure outOfPlace, inPlace;
        const uint64_t seed = bytes * 31 + cycle + i * 1000003;
        if (!measure(o, ranks, s, g, false, seed, &outOfPlace)) return -1;
        if (!measure(o, ranks, s, g, true, seed, &inPlace)) return -1;
        totalWrong += outOfPlace.wrong + inPlace.wrong;
        wrongHere += outOfPlace.wrongHere + inPlace.wrongHere;
        if (ranks.leads()) {
          printRow(o, s, size, g.paramCount, nranks, outOfPlace, inPlace);
          // As nccl-tests: the average over every row of both columns.
          for (const Measure* m : {&outOfPlace, &inPlace}) {
            if (!m->ran) continue;
            busbwSum += algbw(size, *m) * s.spec->busFactor(nranks);
            ++cells;
          }
        }
        size_t next =
            o.stepFactor > 1 ? static_cast<size_t>(bytes * o.stepFactor) : bytes + o.stepBytes;
        if (next <= bytes) break;
        bytes = next;
      }
    }
  }
  if (ranks.leads()) {
    printf("# Wrong elements       : %lld %s\n", totalWrong, totalWrong == 0 ? "OK" : "FAILED");
    printf("# Avg bus bandwidth    : %g \n#\n", cells > 0 ? busbwSum / cells : 0.0);
    fflush(stdout);
  }
  // A wrong total with nothing wrong here is another rank's output, or the sum itself, gone
  // wrong: this thread fails too, while the rank that found it fails on its own count.
  return wrongHere > 0 ? wrongHere : totalWrong;
}

}  // namespace braid::perf
