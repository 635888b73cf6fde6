// braid-perf's measuring loop: the size sweep, the timing of out-of-place and
// in-place calls, the check of every rank's output, and the table nccl-tests prints.
#include "perf/runner.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "perf/data.h"

namespace braid::perf {
namespace {

using Clock = std::chrono::steady_clock;

// nccl-tests' bus bandwidth factor for all_reduce: each rank sends and
// receives 2(n-1)/n of the buffer, which makes busbw comparable across n.
double busFactor(int nranks) { return nranks > 1 ? 2.0 * (nranks - 1) / nranks : 1.0; }

// Reduces one value per owned rank over all ranks, with the collective being
// measured; every entry of `values` then holds the result.
bool reduceDoubles(ThreadRanks& ranks, std::vector<double>* values, ncclRedOp_t op,
                   const char* what) {
  return ranks.each(what, [&](Rank& r, size_t g) {
    double* v = &(*values)[g];
    return ncclAllReduce(v, v, 1, ncclFloat64, op, r.comm, nullptr);
  });
}

struct Measure {
  double usec = 0;
  long long wrong = 0;
};

bool timeAndCheck(const Options& o, ThreadRanks& ranks, size_t count, bool inPlace, uint64_t seed,
                  Measure* m) {
  auto input = [inPlace](Rank& r) { return inPlace ? r.recv.data() : r.send.data(); };
  auto fill = [&] {
    for (Rank& r : ranks.ranks()) fillInput(input(r), count, o.type, o.op, r.rank, seed);
  };
  auto allReduce = [&](Rank& r, size_t) {
    return ncclAllReduce(input(r), r.recv.data(), count, o.type, o.op, r.comm, nullptr);
  };
  fill();
  for (int i = 0; i < o.warmupIters; ++i) {
    if (!ranks.each("warm-up", allReduce)) return false;
    if (inPlace) fill();
  }
  // As nccl-tests: one time per thread, covering all of its ranks.
  auto t0 = Clock::now();
  for (int i = 0; i < o.iters; ++i) {
    if (!ranks.each("allreduce", allReduce)) return false;
  }
  double usec = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / o.iters;
  // -a: which time the table shows. Each thread's time enters once per rank
  // it owns, so the sum over ranks divided by nranks is the mean over threads.
  ncclRedOp_t agg = o.average == 2 ? ncclMin : o.average == 3 ? ncclMax : ncclSum;
  if (o.average != 0) {
    std::vector<double> times(ranks.ranks().size(), usec);
    if (!reduceDoubles(ranks, &times, agg, "time reduction")) return false;
    usec = times[0];
    if (o.average == 1) usec /= ranks.nranks();
  }
  m->usec = usec;
  m->wrong = 0;
  if (o.check) {
    fill();
    if (!ranks.each("check run", allReduce)) return false;
    std::vector<double> wrong;
    for (Rank& r : ranks.ranks()) {
      wrong.push_back(static_cast<double>(
          countWrongAllReduce(r.recv.data(), count, o.type, o.op, ranks.nranks(), seed)));
    }
    if (!reduceDoubles(ranks, &wrong, ncclSum, "#wrong reduction")) return false;
    m->wrong = static_cast<long long>(wrong[0]);
  }
  return true;
}

void printRow(const Options& o, size_t bytes, size_t count, int nranks, const Measure& outOfPlace,
              const Measure& inPlace) {
  printf("%12zu  %12zu  %8s  %6s  %6d", bytes, count, typeName(o.type), opName(o.op), -1);
  for (const Measure* m : {&outOfPlace, &inPlace}) {
    double algbw = m->usec > 0 ? static_cast<double>(bytes) / m->usec / 1e3 : 0;
    double busbw = algbw * busFactor(nranks);
    char wrong[32];
    if (o.check) {
      snprintf(wrong, sizeof(wrong), "%lld", m->wrong);
    } else {
      snprintf(wrong, sizeof(wrong), "N/A");
    }
    printf("  %8.2f  %6.2f  %6.2f  %6s", m->usec, algbw, busbw, wrong);
  }
  printf("\n");
  fflush(stdout);
}

}  // namespace

void printHeader(const Options& o, int nranks, const int* pids) {
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
  for (int r = 0; r < nranks; ++r) {
    printf("#  Rank %2d Group  0 Pid %6d on host memory (no GPU)\n", r, pids[r]);
  }
  printf("#\n");
  printf("# %10s  %12s  %8s  %6s  %6s  %30s  %30s\n", "", "", "", "", "", "out-of-place",
         "in-place");
  printf("# %10s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n", "size", "count",
         "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
         "#wrong");
  printf("# %10s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n", "(B)",
         "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  fflush(stdout);
}

long long runBenchmark(const Options& o, ThreadRanks& ranks) {
  const size_t elem = typeSize(o.type);
  for (Rank& r : ranks.ranks()) {
    r.send.assign(o.maxBytes + elem, 0);
    r.recv.assign(o.maxBytes + elem, 0);
  }
  long long totalWrong = 0;
  double busbwSum = 0;
  int rows = 0;
  for (int cycle = 0; cycle < o.cycles; ++cycle) {
    for (size_t bytes = o.minBytes; bytes <= o.maxBytes;) {
      size_t count = bytes / elem;
      Measure outOfPlace, inPlace;
      uint64_t seed = bytes * 31 + cycle;
      if (!timeAndCheck(o, ranks, count, false, seed, &outOfPlace)) return -1;
      if (!timeAndCheck(o, ranks, count, true, seed, &inPlace)) return -1;
      totalWrong += outOfPlace.wrong + inPlace.wrong;
      if (ranks.leads()) {
        printRow(o, count * elem, count, ranks.nranks(), outOfPlace, inPlace);
        // As nccl-tests: the average over every row of both columns.
        for (const Measure* m : {&outOfPlace, &inPlace}) {
          double algbw = m->usec > 0 ? static_cast<double>(count * elem) / m->usec / 1e3 : 0;
          busbwSum += algbw * busFactor(ranks.nranks());
          ++rows;
        }
      }
      size_t next =
          o.stepFactor > 1 ? static_cast<size_t>(bytes * o.stepFactor) : bytes + o.stepBytes;
      if (next <= bytes) break;
      bytes = next;
    }
  }
  if (ranks.leads()) {
    printf("# Wrong elements       : %lld %s\n", totalWrong, totalWrong == 0 ? "OK" : "FAILED");
    printf("# Avg bus bandwidth    : %g \n#\n", rows > 0 ? busbwSum / rows : 0.0);
    fflush(stdout);
  }
  return totalWrong;
}

}  // namespace braid::perf
