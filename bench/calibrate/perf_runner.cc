#include "calibrate/perf_runner.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

namespace braid::calibrate {
namespace {

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string commandLine(const PerfRequest& r) {
  std::ostringstream cmd;
  cmd << "timeout -k 5 " << r.runTimeoutS << " env";
  if (!r.forceAlgorithm) cmd << " -u BRAID_ALGO -u NCCL_ALGO -u BRAID_PROTO -u NCCL_PROTO";
  cmd << " BRAID_TIMEOUT_MS=" << r.waitTimeoutMs;
  if (r.forceAlgorithm) {
    // BRAID_NCHANNELS=1: the model's figures are per call with one channel.
    cmd << " BRAID_ALGO=" << algo::algorithmName(r.algorithm)
        << " BRAID_PROTO=" << algo::protocolName(r.protocol) << " BRAID_NCHANNELS=1";
  }
  for (const std::string& e : r.env) cmd << ' ' << shellQuote(e);
  cmd << ' ' << shellQuote(r.perfPath) << ' '
      << (r.test.empty() ? collectiveFlagName(r.collective) : shellQuote(r.test)) << " --procs "
      << r.nranks << " -b " << r.minBytes << " -e " << r.maxBytes << " -f " << r.stepFactor
      << " -c 0 -n " << r.iters << " -w " << r.warmup << (r.memAlloc ? " -R 1" : "") << " 2>&1";
  return cmd.str();
}

// Runs `command`; returns its exit status (-1 if it could not start or was
// killed by a signal) and its output.
int runCapturing(const std::string& command, std::string* output) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) output->append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// braid-perf prints "ncclCommInitRank failed: invalid usage ... (<message>)"
// when the library refuses BRAID_ALGO / BRAID_PROTO; returns the message.
bool refusedAtInit(const std::string& output, std::string* reason) {
  const size_t at = output.find("ncclCommInitRank failed: invalid usage");
  if (at == std::string::npos) return false;
  const size_t end = output.find('\n', at);
  const std::string line = output.substr(at, end == std::string::npos ? end : end - at);
  const size_t open = line.rfind(" (");
  *reason = open == std::string::npos ? line : line.substr(open + 2, line.size() - open - 3);
  return true;
}

// Table rows: size count type redop root time algbw busbw #wrong time algbw busbw #wrong.
// Keeps the mean of the out-of-place and in-place times of each size.
void parseRows(const std::string& output, std::map<size_t, std::vector<double>>* times) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.size() < 10 || f[0][0] == '#') continue;
    char* end = nullptr;
    const unsigned long long bytes = std::strtoull(f[0].c_str(), &end, 10);
    if (*end != '\0' || bytes == 0) continue;  // a header, or a size too small for every rank
    double sum = 0;
    int count = 0;
    for (int column : {5, 9}) {
      const double us = std::strtod(f[column].c_str(), &end);
      if (*end == '\0' && us > 0) sum += us, ++count;
    }
    if (count > 0) (*times)[bytes].push_back(sum / count);
  }
}

std::string lastLines(const std::string& s, int count) {
  size_t at = s.size();
  for (int i = 0; i <= count && at != std::string::npos && at > 0; ++i) at = s.rfind('\n', at - 1);
  return at == std::string::npos ? s : s.substr(at + 1);
}

}  // namespace

Result<PerfResult> runPerf(const PerfRequest& request) {
  const std::string command = commandLine(request);
  std::map<size_t, std::vector<double>> times;
  PerfResult result;
  for (int r = 0; r < request.repeats; ++r) {
    std::string output;
    const int status = runCapturing(command, &output);
    if (status != 0) {
      if (refusedAtInit(output, &result.reason)) {
        result.refused = true;
        return result;
      }
      if (status == -1 && output.empty()) return systemError("could not run: " + command);
      result.failed = true;
      result.reason =
          "exit " + std::to_string(status) +
          (status == 124 ? " (killed after " + std::to_string(request.runTimeoutS) + " s)"
                         : std::string()) +
          ": " + command + "\n" + lastLines(output, 6);
      return result;
    }
    parseRows(output, &times);
  }
  for (const auto& [bytes, us] : times) {
    result.samples.push_back({bytes, *std::min_element(us.begin(), us.end())});
  }
  if (result.samples.empty()) return internalError("braid-perf printed no rows: " + command);
  return result;
}

}  // namespace braid::calibrate
