#include "dump_reader.h"

#include <cstdio>
#include <sstream>

namespace braid::doctor {
namespace {

/// "value" of "key: value" when `line` starts with "key: ".
bool field(const std::string& line, const char* key, std::string* value) {
  const std::string prefix = std::string(key) + ": ";
  if (line.compare(0, prefix.size(), prefix) != 0) return false;
  *value = line.substr(prefix.size());
  return true;
}

Status badLine(const std::string& source, int number, const std::string& line) {
  return invalidArgument(source + ":" + std::to_string(number) +
                         ": not a flight recorder line: " + line.substr(0, 120));
}

/// "17 running AllReduce of 4 x float sum | ring/simple, 1 channel | 12.500 ms"
bool parseCall(const std::string& text, DumpCall* call) {
  unsigned long long seq = 0;
  char state[16] = {};
  int used = 0;
  if (sscanf(text.c_str(), "%llu %15s %n", &seq, state, &used) != 2) return false;
  const size_t bar1 = text.find(" | ", used);
  const size_t bar2 = bar1 == std::string::npos ? bar1 : text.find(" | ", bar1 + 3);
  if (bar2 == std::string::npos) return false;
  call->seq = seq;
  call->state = state;
  call->what = text.substr(used, bar1 - used);
  call->how = text.substr(bar1 + 3, bar2 - bar1 - 3);
  return sscanf(text.c_str() + bar2 + 3, "%lf ms", &call->ms) == 1;
}

/// "call 17 channel 0 recv rank 2 instruction 7 of 12 for 5000.100 ms"
bool parseWait(const std::string& text, DumpWait* wait) {
  unsigned long long seq = 0;
  char kind[8] = {};
  if (sscanf(text.c_str(), "call %llu channel %d %7s rank %d instruction %d of %d for %lf ms", &seq,
             &wait->channel, kind, &wait->peer, &wait->instr, &wait->instrs, &wait->ms) != 7) {
    return false;
  }
  wait->seq = seq;
  wait->recv = std::string(kind) == "recv";
  return wait->recv || std::string(kind) == "send";
}

}  // namespace

const DumpCall* RankDump::stuckCall() const {
  const DumpCall* oldest = nullptr;
  for (const DumpCall& c : calls) {
    if (c.inFlight() && (oldest == nullptr || c.seq < oldest->seq)) oldest = &c;
  }
  if (oldest == nullptr && !calls.empty() && calls.back().state == "failed") return &calls.back();
  return oldest;
}

int RankDump::failedWaitingFor(uint64_t seq) const {
  const std::string prefix = "call " + std::to_string(seq) + " ";
  for (const std::string& e : errors) {
    if (e.compare(0, prefix.size(), prefix) != 0) continue;
    const size_t at = e.find("waiting for rank ");
    if (at != std::string::npos) return std::atoi(e.c_str() + at + 17);
  }
  return -1;
}

const DumpCall* RankDump::call(uint64_t seq) const {
  for (const DumpCall& c : calls) {
    if (c.seq == seq) return &c;
  }
  return nullptr;
}

Result<RankDump> parseDump(const std::string& text, const std::string& source) {
  RankDump d;
  d.source = source;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  bool header = false;
  bool ended = false;
  while (std::getline(lines, line)) {
    ++number;
    std::string v;
    if (line == "braid flight recorder") {
      header = true;
    } else if (line == "end") {
      ended = true;
    } else if (field(line, "comm", &v)) {
      d.comm = v;
    } else if (field(line, "rank", &v)) {
      d.rank = std::atoi(v.c_str());
    } else if (field(line, "nranks", &v)) {
      d.nranks = std::atoi(v.c_str());
    } else if (field(line, "pid", &v)) {
      d.pid = std::atoi(v.c_str());
    } else if (field(line, "host", &v)) {
      d.host = v;
    } else if (field(line, "name", &v)) {
      d.name = v;
    } else if (field(line, "memory", &v)) {
      d.memory = v;
    } else if (field(line, "reason", &v)) {
      d.reason = v;
    } else if (field(line, "time", &v)) {
      d.time = v;
    } else if (field(line, "lost", &v)) {
      d.lost.push_back(v);
    } else if (field(line, "error", &v)) {
      d.errors.push_back(v);
    } else if (field(line, "call", &v)) {
      DumpCall call;
      if (!parseCall(v, &call)) return badLine(source, number, line);
      d.calls.push_back(call);
    } else if (field(line, "wait", &v)) {
      DumpWait wait;
      if (!parseWait(v, &wait)) return badLine(source, number, line);
      d.waits.push_back(wait);
    } else if (!line.empty()) {
      return badLine(source, number, line);
    }
  }
  if (!header) return invalidArgument(source + ": not a braid flight recorder dump");
  if (!ended) return invalidArgument(source + ": the dump is cut short (no \"end\" line)");
  if (d.comm.empty() || d.rank < 0 || d.nranks <= 0 || d.rank >= d.nranks) {
    return invalidArgument(source + ": the dump does not say which communicator and rank");
  }
  return d;
}

}  // namespace braid::doctor
