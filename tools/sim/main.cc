// braid-sim: checks, times and draws braid's schedules at any scale.
//
//   braid-sim --coll all_reduce --algo ring --nranks 4096
//   braid-sim --algo tree --machine "512x8,nvlink=450GB/s,net=400Gb/s" --bytes 256M
//   braid-sim --sweep 8:4G
//   braid-sim --nranks 8 --machine 2x4 --bytes 1M --svg ring.svg
//
// usageText() (options.cc) lists every flag.
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "options.h"
#include "study.h"
#include "svg.h"
#include "units.h"

namespace braid::sim {
namespace {

using Clock = std::chrono::steady_clock;

// printf into a string: the check and the timing run at once on two
// threads, and print in order when both are done.
void appendf(std::string& out, const char* format, ...) __attribute__((format(printf, 2, 3)));
void appendf(std::string& out, const char* format, ...) {
  char text[4096];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  out += text;
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string millions(uint64_t n) {
  char text[32];
  if (n >= 10000000) {
    snprintf(text, sizeof(text), "%.1fM", n / 1e6);
  } else {
    snprintf(text, sizeof(text), "%llu", static_cast<unsigned long long>(n));
  }
  return text;
}

void printHeader(const CommandLine& c) {
  const Study& s = c.study;
  printf("braid-sim: %s, %s, %d ranks, %d channel%s, %s protocol\n",
         collectiveFlagName(s.collective), algo::algorithmName(s.algorithm), s.nranks, s.nchannels,
         s.nchannels == 1 ? "" : "s", algo::protocolName(s.protocol));
  printf("machine: %s\n", describeMachine(s.machine).c_str());
}

// (a) The symbolic check; false if it failed.
bool runCheck(const CommandLine& c, std::string& out) {
  const Study& s = c.study;
  const auto start = Clock::now();
  CheckShape shape = defaultCheckShape(s.collective, s.algorithm, s.nranks);
  if (c.checkShape.count != 0) shape.count = c.checkShape.count;
  if (c.checkShape.chunkElems != 0) shape.chunkElems = c.checkShape.chunkElems;
  if (c.checkShape.sliceElems != 0) shape.sliceElems = c.checkShape.sliceElems;
  Result<ScheduleSet> set = generateSchedules(checkSpec(s, shape), s.threads);
  if (!set.ok()) {
    appendf(out, "FAIL: generating the checked schedules: %s\n", set.status().message().c_str());
    return false;
  }
  const double generated = secondsSince(start);
  CheckOptions options;
  options.inPlace = c.inPlace;
  options.seed = c.seed;
  Result<CheckStats> stats = checkSymbolically(set.value(), options);
  const double total = secondsSince(start);
  appendf(out,
          "check: %llu elements per rank, chunks of %zu, slices of %zu, %s: %s steps "
          "(%s runs)\n",
          static_cast<unsigned long long>(shape.count), shape.chunkElems, shape.sliceElems,
          c.inPlace ? "in place" : "out of place", millions(set.value().steps).c_str(),
          millions([&] {
            uint64_t runs = 0;
            for (const AgentSchedule& a : set.value().agents) runs += a.runs.size();
            return runs;
          }())
              .c_str());
  if (!stats.ok()) {
    appendf(out, "FAIL: %s\n", stats.status().message().c_str());
    return false;
  }
  const CheckStats& st = stats.value();
  appendf(out,
          "OK: symbolic check of %d ranks: %s slices moved, no deadlock, every FIFO drained, "
          "%llu outputs (%s elements) right (generated in %.2f s, checked in %.2f s)\n",
          s.nranks, millions(st.slices).c_str(), static_cast<unsigned long long>(st.ranksChecked),
          millions(st.elementsChecked).c_str(), generated, total - generated);
  return true;
}

// (b) The timing, and (d) the drawing; false if the simulation failed.
bool runTiming(const CommandLine& c, std::string& out) {
  const Study& s = c.study;
  const auto start = Clock::now();
  Result<TimedCall> call = timeCall(s, !c.svgPath.empty());
  const double seconds = secondsSince(start);
  if (!call.ok()) {
    appendf(out, "FAIL: timing: %s\n", call.status().message().c_str());
    return false;
  }
  const TimedCall& t = call.value();
  appendf(out,
          "time: %s bytes in %s: algbw %s, busbw %s (%s slices on %s steps, %d of %d agents "
          "alone on their ports; simulated in %.2f s)\n",
          formatBytes(s.bytes).c_str(), formatDuration(t.timing.timeUs).c_str(),
          formatBandwidth(t.algBytesPerUs).c_str(), formatBandwidth(t.busBytesPerUs).c_str(),
          millions(t.timing.slices).c_str(), millions(t.steps).c_str(), t.timing.privateAgents,
          s.nranks * s.nchannels, seconds);
  if (t.modelUs) {
    appendf(out, "cost model: %s (simulated / model = %.2f)\n", formatDuration(*t.modelUs).c_str(),
            *t.modelUs > 0 ? t.timing.timeUs / *t.modelUs : 0.0);
  } else {
    appendf(out, "cost model: no prediction for this call\n");
  }
  if (!c.svgPath.empty()) {
    SvgOptions svg;
    svg.title = std::string(algo::algorithmName(s.algorithm)) + " " +
                collectiveFlagName(s.collective) + ", " + std::to_string(s.nranks) + " ranks, " +
                formatBytes(s.bytes) + " bytes: " + formatDuration(t.timing.timeUs);
    svg.subtitle = describeMachine(s.machine);
    std::ofstream file(c.svgPath);
    file << drawSchedule(s.nranks, s.nchannels, t.timing, svg);
    if (!file) {
      appendf(out, "FAIL: cannot write %s\n", c.svgPath.c_str());
      return false;
    }
    appendf(out, "svg: %s (%zu steps, %zu messages)\n", c.svgPath.c_str(), t.timing.steps.size(),
            t.timing.messages.size());
  }
  return true;
}

std::string cell(const std::optional<double>& us) { return us ? formatDuration(*us) : "-"; }

// (c) Ring against tree at every size, and where the ring starts to win.
bool runSweep(const CommandLine& c) {
  const auto start = Clock::now();
  printf("%10s %12s %12s %6s %12s %12s %6s\n", "bytes", "ring", "tree", "best", "ring model",
         "tree model", "best");
  auto printRow = [](const SweepRow& r) {
    const bool modelled = r.ringModelUs && r.treeModelUs;
    printf("%10s %12s %12s %6s %12s %12s %6s\n", formatBytes(r.bytes).c_str(),
           formatDuration(r.ringUs).c_str(), formatDuration(r.treeUs).c_str(),
           r.ringUs <= r.treeUs ? "ring" : "tree", cell(r.ringModelUs).c_str(),
           cell(r.treeModelUs).c_str(),
           !modelled                          ? "-"
           : *r.ringModelUs <= *r.treeModelUs ? "ring"
                                              : "tree");
    fflush(stdout);
  };
  Result<std::vector<SweepRow>> rows = sweepRingTree(c.study, c.sweepMin, c.sweepMax, printRow);
  if (!rows.ok()) {
    printf("FAIL: sweep: %s\n", rows.status().message().c_str());
    return false;
  }
  for (bool byModel : {false, true}) {
    const std::optional<uint64_t> from = crossover(rows.value(), byModel);
    const char* who = byModel ? "cost model" : "simulation";
    if (!from) {
      printf("crossover (%s): none, the tree is faster at %s\n", who,
             formatBytes(rows.value().back().bytes).c_str());
    } else if (*from == 0) {
      printf("crossover (%s): none, the ring is never slower\n", who);
    } else {
      printf("crossover (%s): the ring is faster from %s bytes on\n", who,
             formatBytes(*from).c_str());
    }
  }
  printf("(swept in %.2f s)\n", secondsSince(start));
  return true;
}

}  // namespace
}  // namespace braid::sim

int main(int argc, char** argv) {
  using namespace braid::sim;
  braid::Result<CommandLine> parsed = parseCommandLine(argc, argv);
  if (!parsed.ok()) {
    fprintf(stderr, "braid-sim: %s\n(braid-sim --help lists the flags)\n",
            parsed.status().message().c_str());
    return 2;
  }
  const CommandLine& c = parsed.value();
  if (c.help) {
    fputs(usageText().c_str(), stdout);
    return 0;
  }
  printHeader(c);
  bool ok = true;
  if (c.sweep) {
    ok = runSweep(c);
  } else {
    std::string checkText, timingText;
    bool checked = true;
    std::thread checker;
    if (c.check) checker = std::thread([&] { checked = runCheck(c, checkText); });
    const bool timed = !c.time || runTiming(c, timingText);
    if (checker.joinable()) checker.join();
    fputs(checkText.c_str(), stdout);
    fputs(timingText.c_str(), stdout);
    ok = checked && timed;
  }
  return ok ? 0 : 1;
}
