#include "calibrate/zero_copy_sweep.h"

#include <cstdarg>
#include <cstdio>
#include <map>

#include "calibrate/perf_runner.h"
#include "config.h"

namespace braid::calibrate {
namespace {

std::string what(const ZeroCopySweep& s) {
  return std::string(collectiveFlagName(s.collective)) + " N=" + std::to_string(s.nranks);
}

// Both sides' sweeps, alternating so that both see the same machine state;
// size -> every run's time (the mean of out of place and in place) per side.
Status sweepBoth(const Settings& settings, ZeroCopySweep* sweep) {
  PerfRequest request;
  request.perfPath = settings.perfPath;
  request.collective = sweep->collective;
  request.nranks = sweep->nranks;
  request.forceAlgorithm = false;  // zero-copy runs only when the library chooses
  request.memAlloc = true;
  request.minBytes = settings.zeroCopyMinBytes;
  request.maxBytes = settings.zeroCopyMaxBytes;
  request.stepFactor = 2;
  request.iters = settings.iters;
  request.warmup = settings.warmup;
  request.repeats = 1;
  const std::vector<std::string> sides[] = {{"BRAID_ZERO_COPY=0"},
                                            {"BRAID_ZERO_COPY=1", "BRAID_ZERO_COPY_MIN_BYTES=0"}};
  std::map<size_t, std::vector<double>> times[2];
  for (int r = 0; r < settings.repeats; ++r) {
    for (int side = 0; side < 2; ++side) {
      request.env = sides[side];
      std::fprintf(stderr, "braid-calibrate: zero-copy %s, %s, run %d of %d\n",
                   side == 0 ? "off" : "on", what(*sweep).c_str(), r + 1, settings.repeats);
      BRAID_ASSIGN_OR_RETURN(PerfResult result, runPerf(request));
      if (result.refused || result.failed) {
        sweep->failure =
            (side == 0 ? "BRAID_ZERO_COPY=0: " : "BRAID_ZERO_COPY=1: ") + result.reason;
        return Status::success();
      }
      for (const Sample& s : result.samples) times[side][s.bytes].push_back(s.us);
    }
  }
  for (const auto& [bytes, fifo] : times[0]) {
    auto zeroCopy = times[1].find(bytes);
    if (zeroCopy == times[1].end()) continue;
    sweep->points.push_back({bytes, tune::medianOf(fifo), tune::medianOf(zeroCopy->second)});
  }
  sweep->crossover = tune::zeroCopyCrossover(sweep->points);
  return Status::success();
}

std::string sizeName(size_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

void appendf(std::string* out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void appendf(std::string* out, const char* fmt, ...) {
  char line[256];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof(line), fmt, args);
  va_end(args);
  *out += line;
}

void appendTable(const ZeroCopySweep& s, std::string* out) {
  appendf(out, "  %s:\n", what(s).c_str());
  if (!s.failure.empty()) {
    appendf(out, "    FAILED, skipped: %s\n", s.failure.c_str());
    return;
  }
  appendf(out, "    %10s %12s %14s %8s\n", "bytes", "FIFOs (us)", "zero-copy (us)", "zc/FIFO");
  for (const tune::ZeroCopyPoint& p : s.points) {
    appendf(out, "    %10zu %12.4g %14.4g %8.2f%s\n", p.bytes, p.fifoUs, p.zeroCopyUs,
            p.zeroCopyUs / p.fifoUs,
            s.crossover && p.bytes == *s.crossover ? "  <- crossover" : "");
  }
  if (!s.crossover) {
    appendf(out, "    no crossover: zero-copy was slower at the largest size measured\n");
  } else if (*s.crossover == s.points.front().bytes) {
    appendf(out, "    crossover at or below %s: zero-copy was as fast at every size measured\n",
            sizeName(*s.crossover).c_str());
  } else {
    appendf(out, "    crossover %s\n", sizeName(*s.crossover).c_str());
  }
}

}  // namespace

Result<std::vector<ZeroCopySweep>> measureZeroCopy(const Settings& settings) {
  std::vector<ZeroCopySweep> sweeps;
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather}) {
    for (int n : settings.ranks) {
      if (n < 2) continue;
      ZeroCopySweep sweep;
      sweep.collective = c;
      sweep.nranks = n;
      BRAID_TRY(sweepBoth(settings, &sweep));
      sweeps.push_back(std::move(sweep));
    }
  }
  return sweeps;
}

std::string zeroCopyReport(const std::vector<ZeroCopySweep>& sweeps, const Settings& settings) {
  std::string out;
  appendf(&out,
          "\n# zero-copy against the FIFOs: braid-perf -R 1 (ncclMemAlloc buffers), the library "
          "choosing;\n# time per call (mean of out of place and in place), median of %d "
          "alternating runs per side\n",
          settings.repeats);
  for (const ZeroCopySweep& s : sweeps) appendTable(s, &out);
  // One threshold serves every rank count: it comes from those whose ranks
  // each have a CPU, unless there are none. Ranks that share CPUs are shown
  // but do not set it (their times follow the scheduler more than the path).
  bool anyUnshared = false;
  for (const ZeroCopySweep& s : sweeps)
    anyUnshared |= s.failure.empty() && s.nranks <= settings.cores;
  std::optional<size_t> recommended;
  std::string from, never;
  for (const ZeroCopySweep& s : sweeps) {
    if (!s.failure.empty() || (anyUnshared && s.nranks > settings.cores)) continue;
    if (!s.crossover) {
      never += (never.empty() ? "" : ", ") + what(s);
      continue;
    }
    from += (from.empty() ? "" : ", ") + what(s);
    if (!recommended || *s.crossover > *recommended) recommended = s.crossover;
  }
  const long long current = Config().zeroCopyMinBytes;
  if (!never.empty() || !recommended) {
    appendf(&out,
            "\n# no recommended BRAID_ZERO_COPY_MIN_BYTES: zero-copy did not keep up at the "
            "largest size for %s\n# (the default, Config::zeroCopyMinBytes in src/config.h, is "
            "%lld)\n",
            never.empty() ? "any rank count" : never.c_str(), current);
    return out;
  }
  appendf(&out,
          "\n# recommended BRAID_ZERO_COPY_MIN_BYTES=%zu (%s): the largest crossover of %s%s\n"
          "# (the default, Config::zeroCopyMinBytes in src/config.h, is %lld)\n",
          *recommended, sizeName(*recommended).c_str(), from.c_str(),
          anyUnshared ? " (ranks that each have a CPU)" : " (every rank count shares CPUs)",
          current);
  return out;
}

}  // namespace braid::calibrate
