// Timing and checking one cell of braid-perf's table (see measure.h).
#include "perf/measure.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "perf/data.h"
#include "perf/device.h"
#include "perf/model.h"

namespace braid::perf {
namespace {

using Clock = std::chrono::steady_clock;

// Reduces one value per owned rank over all ranks, with the library's
// all_reduce; every entry of `values` then holds the result.
bool reduceDoubles(ThreadRanks& ranks, std::vector<double>* values, ncclRedOp_t op,
                   const char* what) {
  std::vector<std::vector<double>> tables;
  for (double v : *values) tables.push_back({v});
  if (!ranks.allReduceDoubles(&tables, op, what)) return false;
  for (size_t g = 0; g < values->size(); ++g) (*values)[g] = tables[g][0];
  return true;
}

// -a: which of the ranks' values the table shows: rank 0's (0), their mean
// (1), minimum (2) or maximum (3). A value per owned rank comes in; *out is
// the same on every thread.
bool aggregate(const Options& o, ThreadRanks& ranks, std::vector<double>* values, const char* what,
               double* out) {
  if (o.average != 0) {
    ncclRedOp_t agg = o.average == 2 ? ncclMin : o.average == 3 ? ncclMax : ncclSum;
    if (!reduceDoubles(ranks, values, agg, what)) return false;
    if (o.average == 1) (*values)[0] /= ranks.nranks();
  }
  *out = (*values)[0];
  return true;
}

// Where one rank's call reads and writes, and how many bytes of its receive
// buffer the call and its in-place input span.
struct Buffers {
  char* send;
  char* recv;
  size_t extent;
};

// The buffers in the rank's send and receive memory starting at sendBase
// and recvBase: its host buffers, or its device buffers on a GPU.
Buffers buffersIn(char* sendBase, char* recvBase, const RankGeometry& rg, size_t elem,
                  bool inPlace) {
  if (!inPlace) return {sendBase, recvBase, rg.recvCount * elem};
  const size_t extent =
      std::max(rg.sendInplaceAt + rg.sendCount, rg.recvInplaceAt + rg.recvCount) * elem;
  return {recvBase + rg.sendInplaceAt * elem, recvBase + rg.recvInplaceAt * elem, extent};
}

Buffers buffersOf(Rank& r, const RankGeometry& rg, size_t elem, bool inPlace) {
  return buffersIn(r.hostSend, r.hostRecv, rg, elem, inPlace);
}

// What the call passes: the device buffers on a GPU communicator.
Buffers callBuffersOf(Rank& r, const RankGeometry& rg, size_t elem, bool inPlace) {
  if (r.device < 0) return buffersOf(r, rg, elem, inPlace);
  return buffersIn(r.deviceSend, r.deviceRecv, rg, elem, inPlace);
}

// As nccl-tests before a checked call: the receive buffer zeroed, then the
// input written (into the receive buffer, in place); on a GPU both made in
// host memory and copied to the device.
bool prepare(Rank& r, const RankGeometry& rg, size_t elem, bool inPlace, const Inputs& in) {
  Buffers b = buffersOf(r, rg, elem, inPlace);
  memset(r.hostRecv, 0, b.extent);
  fillInput(in, r.rank, 0, b.send, rg.sendCount);
  if (r.device < 0) return true;
  const Device& d = Device::get();
  d.setDevice(r.device);
  if (!inPlace && !d.copy(r.deviceSend, r.hostSend, rg.sendCount * elem, r.stream)) return false;
  return d.copy(r.deviceRecv, r.hostRecv, b.extent, r.stream);
}

// On a GPU: waits for the rank's call and copies its receive buffer back.
bool fetchOutput(Rank& r, const RankGeometry& rg, size_t elem, bool inPlace) {
  if (r.device < 0) return true;
  const Device& d = Device::get();
  d.setDevice(r.device);
  return d.copy(r.hostRecv, r.deviceRecv, buffersOf(r, rg, elem, inPlace).extent, r.stream);
}

// One rank's wrong elements; `before` holds its output region as it was
// before the call, for the segments that must be unchanged.
int64_t countWrong(const Section& s, const Geometry& g, const RankGeometry& rg, Rank& r,
                   size_t elem, bool inPlace, const Inputs& in, const std::vector<char>& before) {
  const char* out = buffersOf(r, rg, elem, inPlace).recv;
  int64_t wrong = 0;
  for (const Segment& seg : s.spec->expect(g, r.rank, in.nranks, s.root)) {
    const char* at = out + seg.offset * elem;
    switch (seg.kind) {
      case Segment::Kind::kCopy:
        wrong += countWrongCopy(in, seg.srcRank, seg.srcIndex, at, seg.length);
        break;
      case Segment::Kind::kReduce:
        wrong += countWrongReduce(in, seg.srcIndex, at, seg.length);
        break;
      case Segment::Kind::kUnchanged:
        for (size_t k = 0; k < seg.length; ++k) {
          if (memcmp(at + k * elem, before.data() + (seg.offset + k) * elem, elem) != 0) ++wrong;
        }
        break;
    }
  }
  return wrong;
}

// --idle_ms: each timed call alone, after every rank slept idleMs and the ranks met (over the
// bootstrap, not the transports, which stay idle): *usec is the mean of the calls' own times,
// to their streams' completion on GPUs. What a call after a compute phase pays, proxies woken
// included.
template <typename CallFn>
bool timeAfterIdle(const Options& o, ThreadRanks& ranks, const char* what, CallFn&& call,
                   double* usec) {
  double total = 0;
  for (int i = 0; i < o.iters; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(o.idleMs));
    if (!ranks.barrier()) return false;
    const auto t0 = Clock::now();
    if (!ranks.each(what, call) || !ranks.synchronize()) return false;
    total += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  }
  *usec = total / o.iters;
  return true;
}

// Runs one checked call on every owned rank. Each rank counts its own wrong elements and says
// so on stderr, so that its process's exit status is its own verdict (the run's verdict must not
// rest on the library under test); the table's #wrong is their sum over all ranks, added up by
// braid's all-reduce as nccl-tests does.
template <typename CallFn>
bool check(ThreadRanks& ranks, const Section& s, const Geometry& g,
           const std::vector<RankGeometry>& mine, size_t elem, bool inPlace, const Inputs& in,
           CallFn&& call, Measure* m) {
  const std::string what = std::string(s.spec->function) + " (check)";
  std::vector<std::vector<char>> before(ranks.ranks().size());
  for (size_t i = 0; i < before.size(); ++i) {
    Rank& r = ranks.ranks()[i];
    if (!prepare(r, mine[i], elem, inPlace, in)) return false;
    const char* out = buffersOf(r, mine[i], elem, inPlace).recv;
    before[i].assign(out, out + mine[i].recvCount * elem);
  }
  if (!ranks.each(what.c_str(), call)) return false;
  for (size_t i = 0; i < before.size(); ++i) {
    if (!fetchOutput(ranks.ranks()[i], mine[i], elem, inPlace)) return false;
  }
  std::vector<double> counts;  // m->wrongHere starts at 0 (measure)
  for (size_t i = 0; i < before.size(); ++i) {
    const int64_t here = countWrong(s, g, mine[i], ranks.ranks()[i], elem, inPlace, in, before[i]);
    if (here > 0) {
      fprintf(stderr, "braid-perf: rank %d: %lld wrong elements after %s of %zu elements (%s)\n",
              ranks.ranks()[i].rank, static_cast<long long>(here), s.spec->function, g.paramCount,
              inPlace ? "in place" : "out of place");
    }
    m->wrongHere += here;
    counts.push_back(static_cast<double>(here));
  }
  if (!reduceDoubles(ranks, &counts, ncclSum, "#wrong reduction")) return false;
  m->wrong = static_cast<long long>(counts[0]);
  return true;
}

}  // namespace

bool measure(const Options& o, ThreadRanks& ranks, const Section& s, const Geometry& g,
             bool inPlace, uint64_t seed, Measure* m) {
  const size_t elem = typeSize(s.type);
  Inputs in;
  in.type = s.type;
  in.op = s.op;
  in.reduces = s.spec->hasOp;
  in.nranks = ranks.nranks();
  in.seed = seed;
  if (inPlace && !s.spec->runsInPlace) {
    *m = Measure{};
    m->ran = false;
    return true;
  }
  // Each owned rank's counts, made once: the timed calls only read them.
  std::vector<RankGeometry> mine;
  for (Rank& r : ranks.ranks()) mine.push_back(s.spec->rankGeometry(g, r.rank, in.nranks));
  auto call = [&](Rank& r, size_t i) {
    Buffers b = callBuffersOf(r, mine[i], elem, inPlace);
    Call c;
    c.send = b.send;
    c.recv = b.recv;
    c.count = g.paramCount;
    c.type = s.type;
    c.op = s.op;
    c.root = s.root;
    c.comm = r.comm;
    c.rank = r.rank;
    c.nranks = ranks.nranks();
    c.v = &mine[i].v;
    c.stream = r.stream;
    return s.spec->run(c);
  };
  // Inputs like the checked ones: timed calls then see ordinary numbers, not
  // whatever in-place calls or earlier sizes left behind.
  auto fill = [&] {
    bool ok = true;
    for (size_t i = 0; i < mine.size(); ++i) {
      ok = prepare(ranks.ranks()[i], mine[i], elem, inPlace, in) && ok;
    }
    return ok;
  };
  const std::string warmup = std::string(s.spec->function) + " (warm-up)";
  const std::string timed = std::string(s.spec->function);
  m->modelUsec = 0;
  if (o.model && !inPlace) {
    std::vector<double> estimates;
    if (!simulateEach(ranks, timed.c_str(), call, &estimates)) return false;
    if (!aggregate(o, ranks, &estimates, "model reduction", &m->modelUsec)) return false;
  }
  if (!fill()) return false;
  for (int i = 0; i < o.warmupIters; ++i) {
    if (!ranks.each(warmup.c_str(), call)) return false;
  }
  if (!ranks.synchronize()) return false;
  if (inPlace && !fill()) return false;
  // Host ranks leave the warm-up (and the in-place fill, whose writes of a large buffer take
  // each rank its own time) at different moments. A barrier before the clock starts, as the MPI
  // peer's MPI_Barrier, keeps one rank's late start out of the others' times. GPU ranks go on
  // as before, timed up to their streams' completion.
  if (!ranks.onGpu() && !ranks.barrier()) return false;
  // As nccl-tests: one time per thread, covering all of its ranks; on GPUs
  // the calls are enqueued back to back and the time ends when the streams
  // have run them.
  double usec = 0;
  if (o.idleMs > 0) {
    if (!timeAfterIdle(o, ranks, timed.c_str(), call, &usec)) return false;
  } else {
    auto t0 = Clock::now();
    for (int i = 0; i < o.iters; ++i) {
      if (!ranks.each(timed.c_str(), call)) return false;
    }
    if (!ranks.synchronize()) return false;
    usec = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / o.iters;
  }
  // Each thread's time enters once per rank it owns, so the mean over ranks
  // is the mean over threads.
  std::vector<double> times(ranks.ranks().size(), usec);
  if (!aggregate(o, ranks, &times, "time reduction", &m->usec)) return false;
  m->wrong = 0;
  m->wrongHere = 0;
  m->checked = o.check != 0 && (!inPlace || s.spec->checkInPlace);
  if (!m->checked) return true;
  return check(ranks, s, g, mine, elem, inPlace, in, call, m);
}

}  // namespace braid::perf
