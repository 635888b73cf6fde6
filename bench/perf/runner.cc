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

bool call(ncclResult_t r, const char* what, const RankContext& ctx) {
  if (r == ncclSuccess) return true;
  fprintf(stderr, "braid-perf: rank %d: %s failed: %s (%s)\n", ctx.rank, what,
          ncclGetErrorString(r), ncclGetLastError(ctx.comm));
  return false;
}

// Reduces a per-rank value over all ranks with the collective being measured.
bool reduceDouble(double* v, ncclRedOp_t op, const RankContext& ctx) {
  return call(ncclAllReduce(v, v, 1, ncclFloat64, op, ctx.comm, nullptr), "time reduction", ctx);
}

struct Measure {
  double usec = 0;
  long long wrong = 0;
};

bool timeAndCheck(const Options& o, const RankContext& ctx, size_t count, bool inPlace,
                  std::vector<char>& send, std::vector<char>& recv, uint64_t seed, Measure* m) {
  const void* in = inPlace ? recv.data() : send.data();
  void* out = recv.data();
  char* fillTarget = inPlace ? recv.data() : send.data();
  fillInput(fillTarget, count, o.type, o.op, ctx.rank, seed);
  for (int i = 0; i < o.warmupIters; ++i) {
    if (!call(ncclAllReduce(in, out, count, o.type, o.op, ctx.comm, nullptr), "warm-up", ctx)) {
      return false;
    }
    if (inPlace) fillInput(fillTarget, count, o.type, o.op, ctx.rank, seed);
  }
  auto t0 = Clock::now();
  for (int i = 0; i < o.iters; ++i) {
    if (!call(ncclAllReduce(in, out, count, o.type, o.op, ctx.comm, nullptr), "allreduce", ctx)) {
      return false;
    }
  }
  double usec = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / o.iters;
  // -a: which rank's time the table shows.
  ncclRedOp_t agg = o.average == 2 ? ncclMin : o.average == 3 ? ncclMax : ncclSum;
  if (o.average != 0) {
    if (!reduceDouble(&usec, agg, ctx)) return false;
    if (o.average == 1) usec /= ctx.nranks;
  }
  m->usec = usec;
  m->wrong = 0;
  if (o.check) {
    fillInput(fillTarget, count, o.type, o.op, ctx.rank, seed);
    if (!call(ncclAllReduce(in, out, count, o.type, o.op, ctx.comm, nullptr), "check run", ctx)) {
      return false;
    }
    double wrong = static_cast<double>(countWrongAllReduce(out, count, o.type, o.op, ctx.nranks,
                                                           seed));
    if (!reduceDouble(&wrong, ncclSum, ctx)) return false;
    m->wrong = static_cast<long long>(wrong);
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
  printf("# nThread %d nGpus %d minBytes %zu maxBytes %zu step: %s warmup iters: %d "
         "iters: %d agg iters: 1 validation: %d graph: 0\n",
         o.threads, o.gpus, o.minBytes, o.maxBytes, step, o.warmupIters, o.iters, o.check);
  printf("#\n# Using devices\n");
  for (int r = 0; r < nranks; ++r) {
    printf("#  Rank %2d Group  0 Pid %6d on host memory (no GPU)\n", r, pids[r]);
  }
  printf("#\n");
  printf("# %10s  %12s  %8s  %6s  %6s  %30s  %30s\n", "", "", "", "", "", "out-of-place",
         "in-place");
  printf("# %10s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n", "size",
         "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
         "busbw", "#wrong");
  printf("# %10s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n", "(B)",
         "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  fflush(stdout);
}

long long runBenchmark(const Options& o, const RankContext& ctx) {
  const size_t elem = typeSize(o.type);
  std::vector<char> send(o.maxBytes + elem), recv(o.maxBytes + elem);
  long long totalWrong = 0;
  double busbwSum = 0;
  int rows = 0;
  for (int cycle = 0; cycle < o.cycles; ++cycle) {
    for (size_t bytes = o.minBytes; bytes <= o.maxBytes;) {
      size_t count = bytes / elem;
      Measure outOfPlace, inPlace;
      uint64_t seed = bytes * 31 + cycle;
      if (!timeAndCheck(o, ctx, count, false, send, recv, seed, &outOfPlace)) return -1;
      if (!timeAndCheck(o, ctx, count, true, send, recv, seed, &inPlace)) return -1;
      totalWrong += outOfPlace.wrong + inPlace.wrong;
      if (ctx.rank == 0) {
        printRow(o, count * elem, count, ctx.nranks, outOfPlace, inPlace);
        // As nccl-tests: the average over every row of both columns.
        for (const Measure* m : {&outOfPlace, &inPlace}) {
          double algbw = m->usec > 0 ? static_cast<double>(count * elem) / m->usec / 1e3 : 0;
          busbwSum += algbw * busFactor(ctx.nranks);
          ++rows;
        }
      }
      size_t next = o.stepFactor > 1 ? static_cast<size_t>(bytes * o.stepFactor)
                                      : bytes + o.stepBytes;
      if (next <= bytes) break;
      bytes = next;
    }
  }
  if (ctx.rank == 0) {
    printf("# Wrong elements       : %lld %s\n", totalWrong, totalWrong == 0 ? "OK" : "FAILED");
    printf("# Avg bus bandwidth    : %g \n#\n", rows > 0 ? busbwSum / rows : 0.0);
    fflush(stdout);
  }
  return totalWrong;
}

}  // namespace braid::perf
