#include "config.h"

#include <sstream>

#include "util/env.h"

namespace braid {

Config Config::fromEnvironment() {
  Config c;
  c.timeoutMs = env::getInt("TIMEOUT_MS", c.timeoutMs);
  c.nchannels = static_cast<int>(env::getInt("NCHANNELS", c.nchannels));
  c.nchannelsSet = env::get("NCHANNELS").has_value();
  c.buffSize = env::getInt("BUFFSIZE", c.buffSize);
  c.algo = env::get("ALGO").value_or("");
  c.proto = env::get("PROTO").value_or("");
  c.transports = env::get("TRANSPORTS").value_or("");
  c.dumpSchedule = env::getInt("DUMP_SCHEDULE", 0) != 0;
  c.deterministic = env::getInt("DETERMINISTIC", 0) != 0;
  c.tracePath = env::get("TRACE").value_or("");
  c.topoFile = env::get("TOPO_FILE").value_or("");
  c.topoDumpFile = env::get("TOPO_DUMP_FILE").value_or("");
  c.p2pLevel = env::get("P2P_LEVEL").value_or("");
  c.spinUs = env::getInt("SPIN_US", c.spinUs);
  c.hostComm = env::getInt("HOST_COMM", 0) != 0;
  c.hostIdOverride = env::get("HOSTID").value_or("");
  for (auto* s : {&c.algo, &c.proto}) {
    for (auto& ch : *s) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
  }
  return c;
}

Status Config::validate() const {
  if (timeoutMs < 0) return invalidArgument("BRAID_TIMEOUT_MS must be >= 0");
  if (nchannels < 1 || nchannels > 64) {
    return invalidArgument("BRAID_NCHANNELS must be between 1 and 64, got " +
                           std::to_string(nchannels));
  }
  if (buffSize < (64 << 10) || buffSize > (1LL << 30)) {
    return invalidArgument("BRAID_BUFFSIZE must be between 64K and 1G, got " +
                           std::to_string(buffSize));
  }
  // BRAID_ALGO and BRAID_PROTO are parsed by tune::parseAllowed, BRAID_P2P_LEVEL
  // and BRAID_TRANSPORTS by the topology (comm_topology.cc).
  return Status::success();
}

bool Config::transportAllowed(const std::string& name) const {
  if (transports.empty()) return true;
  std::stringstream list(transports);
  std::string item;
  while (std::getline(list, item, ',')) {
    if (item == name) return true;
  }
  return false;
}

std::string Config::describe() const {
  std::ostringstream o;
  o << "config: timeout_ms=" << timeoutMs << " nchannels=" << nchannels << " buffsize=" << buffSize
    << " algo=" << (algo.empty() ? "auto" : algo) << " proto=" << (proto.empty() ? "auto" : proto)
    << " transports=" << (transports.empty() ? "all" : transports)
    << " dump_schedule=" << dumpSchedule << " deterministic=" << deterministic
    << " trace=" << (tracePath.empty() ? "off" : tracePath)
    << " topo_file=" << (topoFile.empty() ? "discover" : topoFile)
    << " p2p_level=" << (p2pLevel.empty() ? "default" : p2pLevel)
    << " spin_us=" << (spinUs < 0 ? "auto" : std::to_string(spinUs)) << " host_comm=" << hostComm
    << " hostid=" << (hostIdOverride.empty() ? "auto" : hostIdOverride);
  return o.str();
}

}  // namespace braid
