// libFuzzer target: braid's environment, as a communicator's creation reads
// it. The input is lines NAME=value; each BRAID_* or NCCL_* name becomes an
// environment variable (other lines are ignored). Config::fromEnvironment()
// reads them, validate() judges them, and what validate() accepts goes
// through what the communicator hands each value to next: the algorithm and
// protocol lists (tune::parseAllowed), BRAID_P2P_LEVEL, BRAID_TRANSPORTS, the
// BRAID_IB_HCA filter, the deadlines. BRAID_DEBUG goes to the logger.
//
// Beyond "no crash": a refusal is kInvalidArgument and names the variable,
// and an accepted configuration is within the ranges the code after it
// relies on (fuzz_check.h).
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/deadline.h"
#include "base/env.h"
#include "base/log.h"
#include "config.h"
#include "fuzz/fuzz_check.h"
#include "topology/graph.h"
#include "topology/transport_choice.h"
#include "transport/net/ib/hca_filter.h"
#include "tune/select.h"

extern char** environ;

namespace {

bool braidName(std::string_view name) {
  return name.substr(0, 6) == "BRAID_" || name.substr(0, 5) == "NCCL_";
}

// The "NAME=value" strings in the environment, owned here and handed to putenv: setenv would
// keep a copy of every value it ever saw (glibc never frees them), a leak that grows with every
// input.
std::deque<std::string>& ownedEntries() {
  static std::deque<std::string> entries;
  return entries;
}

// Every BRAID_* and NCCL_* variable goes, so that each input starts from none.
void clearBraidEnvironment() {
  std::vector<std::string> names;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const size_t equals = text.find('=');
    if (equals != std::string_view::npos && braidName(text.substr(0, equals))) {
      names.emplace_back(text.substr(0, equals));
    }
  }
  for (const std::string& name : names) unsetenv(name.c_str());
  ownedEntries().clear();
}

void setFromLines(std::string_view text) {
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    const size_t equals = line.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, equals);
    if (!braidName(name) || name.find('\0') != std::string_view::npos) continue;
    // A NUL ends the value, as in a real environment.
    ownedEntries().emplace_back(line);
    putenv(ownedEntries().back().data());
  }
}

// What an accepted configuration promises the code that uses it.
void checkAccepted(const braid::Config& c) {
  using braid::fuzz::check;
  check(c.nchannels >= 1 && c.nchannels <= 64, "nchannels " + std::to_string(c.nchannels));
  check(c.buffSize >= (64 << 10) && c.buffSize <= (1LL << 30), "buffsize");
  check(c.socketThreads * c.socketsPerThread <= 64, "socket connections");
  check(c.ib.qpsPerConnection >= 1 && c.ib.qpsPerConnection <= 8, "qps per connection");
  // ib_queue_pairs.cc writes these into 4- and 8-bit fields of the address vector.
  check(c.ib.serviceLevel >= 0 && c.ib.serviceLevel <= 15,
        "IB_SL " + std::to_string(c.ib.serviceLevel));
  check(c.ib.trafficClass >= 0 && c.ib.trafficClass <= 255,
        "IB_TC " + std::to_string(c.ib.trafficClass));
  // comm/gpu_launch.cc hands the kernels the deadline in nanoseconds, comm/links.cc the spin.
  check(c.timeoutMs >= 0 && c.timeoutMs <= INT64_MAX / 1000000, "timeout_ms in nanoseconds");
  check(c.heartbeatTimeoutMs >= 0 && c.heartbeatTimeoutMs <= INT64_MAX / 1000000,
        "heartbeat_timeout_ms in nanoseconds");
  check(c.spinUs <= INT64_MAX / 1000, "spin_us in nanoseconds");
  // A number given and accepted is the number used, not one it wrapped into.
  const std::pair<const char*, int64_t> numbers[] = {
      {"TIMEOUT_MS", c.timeoutMs},
      {"NCHANNELS", c.nchannels},
      {"BUFFSIZE", c.buffSize},
      {"SPIN_US", c.spinUs},
      {"HEARTBEAT_TIMEOUT_MS", c.heartbeatTimeoutMs},
      {"SOCKET_NTHREADS", c.socketThreads},
      {"NSOCKS_PERTHREAD", c.socketsPerThread},
      {"ZERO_COPY_MIN_BYTES", c.zeroCopyMinBytes},
      {"IB_GID_INDEX", c.ib.gidIndex},
      {"IB_ROCE_VERSION_NUM", c.ib.rocVersion},
      {"IB_TIMEOUT", c.ib.timeout},
      {"IB_RETRY_CNT", c.ib.retryCount},
      {"IB_QPS_PER_CONNECTION", c.ib.qpsPerConnection},
      {"IB_SL", c.ib.serviceLevel},
      {"IB_TC", c.ib.trafficClass},
      {"IB_EMULATE", c.ib.emulate},
  };
  for (const auto& [name, used] : numbers) {
    const std::optional<std::string> given = braid::env::get(name);
    const std::optional<int64_t> parsed = given ? braid::env::parseSize(*given) : std::nullopt;
    if (parsed && *parsed != used) {
      braid::fuzz::fail(std::string("BRAID_") + name + "='" + *given + "' accepted as " +
                        std::to_string(used));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  clearBraidEnvironment();
  setFromLines(std::string_view(reinterpret_cast<const char*>(data), size));
  braid::log::resetLevel();
  (void)braid::log::level();
  // Quiet from here on: fromEnvironment warns about every value it ignores.
  setenv("BRAID_DEBUG", "NONE", 1);
  braid::log::resetLevel();
  (void)braid::log::level();

  const braid::Config config = braid::Config::fromEnvironment();
  (void)config.describe();
  const braid::Status valid = config.validate();
  if (!valid.ok()) {
    braid::fuzz::check(valid.code() == braid::ErrorCode::kInvalidArgument &&
                           valid.message().find("BRAID_") != std::string::npos,
                       "a refusal that names no variable: " + valid.message());
    return 0;
  }
  checkAccepted(config);
  (void)config.socketAllowed();
  (void)config.verbsAllowed();
  (void)braid::tune::parseAllowed(config.algo, config.proto);
  if (!config.p2pLevel.empty()) (void)braid::topology::parsePathType(config.p2pLevel);
  if (auto transports = braid::topology::TransportSet::parse(config.transports); transports.ok()) {
    (void)transports.value().describe();
  }
  const braid::transport::ib::HcaFilter hca(config.ib.hca);
  (void)hca.allows("mlx5_0", 1);
  (void)braid::Deadline::afterMs(config.timeoutMs).expired();
  (void)braid::Deadline::afterMs(config.heartbeatTimeoutMs).expired();
  return 0;
}
