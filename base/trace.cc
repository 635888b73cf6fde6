#include "base/trace.h"

#include <cstdio>
#include <utility>

namespace braid::trace {

std::string tracePath(const std::string& pattern, int rank) {
  const size_t at = pattern.find("%r");
  if (at == std::string::npos) return pattern + ".rank" + std::to_string(rank) + ".json";
  return pattern.substr(0, at) + std::to_string(rank) + pattern.substr(at + 2);
}

Recorder::Recorder(std::string path, int rank)
    : path_(tracePath(path, rank)), rank_(rank), start_(std::chrono::steady_clock::now()) {}

void Recorder::add(Event event) {
  if (events_.size() >= kMaxEvents) {
    ++dropped_;
    return;
  }
  events_.push_back(std::move(event));
}

namespace {

// Event names are ours (collective and step names), but escape anyway.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

Status Recorder::write() const {
  // "e": close-on-exec, as every descriptor braid opens (a process the caller execs keeps none).
  FILE* f = fopen(path_.c_str(), "we");
  if (f == nullptr) return systemError("BRAID_TRACE: cannot write " + path_);
  fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  // Name the process after the rank and the tracks after what runs on them.
  fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}}",
          rank_, rank_);
  int tracks = 1;
  for (const Event& e : events_) tracks = std::max(tracks, e.track + 1);
  for (int t = 0; t < tracks; ++t) {
    const std::string name = t == 0 ? "collectives" : "channel " + std::to_string(t - 1);
    fprintf(
        f,
        ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":%s}}",
        rank_, t, quoted(name).c_str());
  }
  for (const Event& e : events_) {
    fprintf(f,
            ",\n{\"name\":%s,\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{"
            "%s}}",
            quoted(e.name).c_str(), rank_, e.track, e.startUs, e.durationUs, e.args.c_str());
  }
  if (dropped_ > 0) {
    fprintf(f,
            ",\n{\"name\":\"events "
            "dropped\",\"ph\":\"i\",\"s\":\"p\",\"pid\":%d,\"ts\":0,\"args\":{\"count\":%zu}}",
            rank_, dropped_);
  }
  fprintf(f, "\n]}\n");
  const bool ok = fclose(f) == 0;
  if (!ok) return systemError("BRAID_TRACE: error writing " + path_);
  return Status::success();
}

}  // namespace braid::trace
