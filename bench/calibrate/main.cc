// braid-calibrate: measures the figures of the cost model (src/tune) on
// this machine by running braid-perf with each algorithm and protocol
// forced, fits them on the model's own formulas, and prints a table, the
// model's fit to every measurement, and the body of
// Model::calibratedDefaults() (src/tune/calibrated_defaults.cc); then it
// measures zero-copy against the FIFOs and prints the size where zero-copy
// starts to pay, the recommended BRAID_ZERO_COPY_MIN_BYTES (zero_copy_sweep.h).
// docs/tuning.md explains the figures and how to read the output.
#include <sched.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

#include "calibrate/calibration.h"
#include "calibrate/zero_copy_sweep.h"
#include "tune/select.h"

namespace braid::calibrate {
namespace {

const char kUsage[] =
    "usage: braid-calibrate [options]\n"
    "  --perf PATH              braid-perf to run (default: next to this program)\n"
    "  --ranks LIST             rank counts, comma-separated (default 1,2,3,4)\n"
    "  --min-bytes N            smallest size (default 8)\n"
    "  --max-bytes N            largest size; sizes grow by 4 (default 16M)\n"
    "  --oneshot-max-bytes N    largest one-shot size measured (default 64K, the board's)\n"
    "  --iters N --warmup N     braid-perf's -n and -w (default 30, 5)\n"
    "  --repeats N              sweeps per combination, least disturbed kept; zero-copy:\n"
    "                           alternating runs per side, median kept (default 3)\n"
    "  --no-validate            compare the model with all_reduce only\n"
    "  --zero-copy-min-bytes N  zero-copy threshold sweep from here (default 4K)\n"
    "  --zero-copy-max-bytes N  to here, by factors of 2 (default 16M)\n"
    "  --no-zero-copy           leave the zero-copy threshold out\n"
    "  --zero-copy-only         measure the zero-copy threshold alone, not the model\n"
    "Sizes take a K, M or G suffix.\n";

bool parseSize(const std::string& s, size_t* out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return false;
  size_t mult = 1;
  std::string suffix(end);
  if (suffix == "K" || suffix == "k")
    mult = 1 << 10;
  else if (suffix == "M" || suffix == "m")
    mult = 1 << 20;
  else if (suffix == "G" || suffix == "g")
    mult = 1ULL << 30;
  else if (!suffix.empty())
    return false;
  *out = v * mult;
  return true;
}

bool parseRanks(const std::string& s, std::vector<int>* out) {
  out->clear();
  std::istringstream list(s);
  for (std::string item; std::getline(list, item, ',');) {
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (end == item.c_str() || *end != '\0' || n < 1 || n > 64) return false;
    out->push_back(static_cast<int>(n));
  }
  return !out->empty();
}

std::string defaultPerfPath() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return "braid-perf";
  std::string path(self, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + "braid-perf";
}

bool parseArgs(int argc, char** argv, Settings* s) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool hasValue = i + 1 < argc;
    const std::string value = hasValue ? argv[i + 1] : "";
    bool ok = hasValue;
    if (arg == "--no-validate" || arg == "--no-zero-copy" || arg == "--zero-copy-only") {
      if (arg == "--no-validate") s->validate = false;
      if (arg == "--no-zero-copy") s->zeroCopy = Settings::ZeroCopy::kSkip;
      if (arg == "--zero-copy-only") s->zeroCopy = Settings::ZeroCopy::kOnly;
      continue;
    } else if (arg == "--zero-copy-min-bytes") {
      ok = ok && parseSize(value, &s->zeroCopyMinBytes) && s->zeroCopyMinBytes > 0;
    } else if (arg == "--zero-copy-max-bytes") {
      ok = ok && parseSize(value, &s->zeroCopyMaxBytes);
    } else if (arg == "--perf") {
      s->perfPath = value;
    } else if (arg == "--ranks") {
      ok = ok && parseRanks(value, &s->ranks);
    } else if (arg == "--min-bytes") {
      ok = ok && parseSize(value, &s->minBytes) && s->minBytes > 0;
    } else if (arg == "--max-bytes") {
      ok = ok && parseSize(value, &s->maxBytes);
    } else if (arg == "--oneshot-max-bytes") {
      ok = ok && parseSize(value, &s->oneShotMaxBytes);
    } else if (arg == "--iters" || arg == "--warmup" || arg == "--repeats") {
      const int v = std::atoi(value.c_str());
      ok = ok && v >= (arg == "--warmup" ? 0 : 1);
      (arg == "--iters" ? s->iters : arg == "--warmup" ? s->warmup : s->repeats) = v;
    } else {
      std::fprintf(stderr, "braid-calibrate: unknown option '%s'\n%s", arg.c_str(), kUsage);
      return false;
    }
    if (!ok) {
      std::fprintf(stderr, "braid-calibrate: bad value for %s: '%s'\n%s", arg.c_str(),
                   value.c_str(), kUsage);
      return false;
    }
    ++i;
  }
  if (s->maxBytes < s->minBytes || s->zeroCopyMaxBytes < s->zeroCopyMinBytes) {
    std::fprintf(stderr, "braid-calibrate: a --max-bytes is below its --min-bytes\n");
    return false;
  }
  return true;
}

std::string loadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string one;
  f >> one;
  return one.empty() ? "unknown" : one;
}

std::string today() {
  char buf[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof(buf), "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

int cpusAllowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return CPU_COUNT(&set);
}

void printNotes(const std::vector<FigureNote>& notes) {
  std::printf("\n# %-24s %-52s %-14s %s\n", "figure", "value", "fit error", "source");
  for (const FigureNote& n : notes) {
    char error[32] = "-";
    if (n.measured) {
      std::snprintf(error, sizeof(error), "%.0f%% / %.0f%%", 100 * n.error.median,
                    100 * n.error.max);
    }
    std::printf("  %-24s %-52s %-14s %s\n", n.name.c_str(), n.value.c_str(), error,
                n.source.c_str());
  }
  std::printf(
      "# fit error: median / max of |model - measured| / measured over the fitted points\n");
}

// What the fitted model picks for all_reduce at each rank count and size,
// everything allowed and one-shot up to its limit: where the crossovers fall.
void printChoices(const braid::tune::Model& model, const Settings& s) {
  std::printf("\n# the fitted model's choice for all_reduce (one-shot up to %zu B)\n",
              s.oneShotMaxBytes);
  braid::tune::Allowed allowed;
  allowed.oneShotMaxBytes = s.oneShotMaxBytes;
  for (int n : s.ranks) {
    if (n < 2) continue;
    std::printf("  N=%d:", n);
    std::string last;
    for (size_t bytes = s.minBytes; bytes <= s.maxBytes; bytes *= 4) {
      braid::tune::Query q;
      q.bytes = bytes;
      q.nranks = n;
      auto c = braid::tune::choose(model, q, allowed);
      if (!c.ok()) {
        std::printf(" %s", c.status().message().c_str());
        break;
      }
      const std::string name = std::string(braid::algo::algorithmName(c.value().algorithm)) + "/" +
                               braid::algo::protocolName(c.value().protocol);
      if (name != last)
        std::printf("%s from %zu B %s", last.empty() ? "" : ",", bytes, name.c_str());
      last = name;
    }
    std::printf("\n");
  }
}

// The model's figures: measures, fits and prints them (the sections up to the
// body of Model::calibratedDefaults()); 0, 1 when braid-perf could not run, 3
// when some runs failed.
int calibrateModel(const Settings& settings, const std::string& load) {
  Calibration calibration(settings);
  braid::Status status = calibration.run();
  if (!status.ok()) {
    std::fprintf(stderr, "braid-calibrate: %s\n", status.message().c_str());
    return 1;
  }
  printNotes(calibration.notes());
  std::printf("\n# model against every measurement (median and worst relative error)\n");
  for (const std::string& line : calibration.validation()) std::printf("  %s\n", line.c_str());
  printChoices(calibration.model(), settings);
  std::printf(
      "\n# the model's pick against the fastest measured combination (time of the pick /"
      " best)\n");
  for (const std::string& line : calibration.selection()) std::printf("  %s\n", line.c_str());
  const std::string header =
      "braid-calibrate " + today() + ", " + std::to_string(settings.cores) + " CPUs, load " + load;
  std::printf("\n# body of Model::calibratedDefaults() (src/tune/calibrated_defaults.cc):\n%s",
              modelInitializer(calibration.model(), calibration.notes(), header).c_str());
  if (!calibration.failures().empty()) {
    std::printf("\n# FAILED runs (their algorithm/protocol was skipped):\n");
    for (const std::string& f : calibration.failures()) std::printf("  %s\n", f.c_str());
    return 3;
  }
  return 0;
}

}  // namespace
}  // namespace braid::calibrate

int main(int argc, char** argv) {
  using namespace braid::calibrate;
  Settings settings;
  settings.perfPath = defaultPerfPath();
  settings.cores = cpusAllowed();
  if (!parseArgs(argc, argv, &settings)) return 2;
  const std::string load = loadAverage();
  std::printf("# braid-calibrate %s: %d CPUs, load average %s, perf %s\n", today().c_str(),
              settings.cores, load.c_str(), settings.perfPath.c_str());
  if (std::atof(load.c_str()) > 0.5 * settings.cores) {
    std::printf(
        "# warning: the machine is busy; figures will be noisy (run it on an idle machine)\n");
  }
  int rc = 0;
  if (settings.zeroCopy != Settings::ZeroCopy::kOnly) rc = calibrateModel(settings, load);
  if (rc == 1 || settings.zeroCopy == Settings::ZeroCopy::kSkip) return rc;
  auto sweeps = measureZeroCopy(settings);
  if (!sweeps.ok()) {
    std::fprintf(stderr, "braid-calibrate: %s\n", sweeps.status().message().c_str());
    return 1;
  }
  std::printf("%s", zeroCopyReport(sweeps.value(), settings).c_str());
  for (const ZeroCopySweep& s : sweeps.value()) {
    if (!s.failure.empty()) rc = 3;
  }
  return rc;
}
