#include "machine.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "units.h"

namespace braid::sim {
namespace {

Result<int> parseCount(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value <= 0 || value > (1 << 20)) {
    return invalidArgument("bad " + what + " '" + text + "' in --machine (a positive integer)");
  }
  return static_cast<int>(value);
}

Status applyKey(Machine& m, const std::string& key, const std::string& value) {
  if (key == "nodes") {
    BRAID_ASSIGN_OR_RETURN(m.nodes, parseCount(value, "nodes"));
  } else if (key == "gpus") {
    BRAID_ASSIGN_OR_RETURN(m.gpusPerNode, parseCount(value, "gpus"));
  } else if (key == "nics") {
    BRAID_ASSIGN_OR_RETURN(m.nicsPerNode, parseCount(value, "nics"));
  } else if (key == "nvlink") {
    BRAID_ASSIGN_OR_RETURN(m.nvlinkBytesPerUs, parseBandwidth(value));
  } else if (key == "net") {
    BRAID_ASSIGN_OR_RETURN(m.netBytesPerUs, parseBandwidth(value));
  } else if (key == "nvlink-lat") {
    BRAID_ASSIGN_OR_RETURN(m.nvlinkLatencyUs, parseDuration(value));
  } else if (key == "net-lat") {
    BRAID_ASSIGN_OR_RETURN(m.netLatencyUs, parseDuration(value));
  } else if (key == "nvlink-lat-ll") {
    BRAID_ASSIGN_OR_RETURN(m.nvlinkLatencyLlUs, parseDuration(value));
  } else if (key == "net-lat-ll") {
    BRAID_ASSIGN_OR_RETURN(m.netLatencyLlUs, parseDuration(value));
  } else {
    return invalidArgument("unknown key '" + key +
                           "' in --machine (known: nodes, gpus, nics, nvlink, net, nvlink-lat, "
                           "net-lat, nvlink-lat-ll, net-lat-ll)");
  }
  return Status::success();
}

}  // namespace

Result<Machine> parseMachine(const std::string& text) {
  Machine m;
  bool nicsGiven = false;
  std::stringstream parts(text);
  std::string part;
  bool first = true;
  while (std::getline(parts, part, ',')) {
    const size_t eq = part.find('=');
    const size_t x = part.find('x');
    if (first && eq == std::string::npos && x != std::string::npos) {
      BRAID_ASSIGN_OR_RETURN(m.nodes, parseCount(part.substr(0, x), "node count"));
      BRAID_ASSIGN_OR_RETURN(m.gpusPerNode, parseCount(part.substr(x + 1), "GPUs per node"));
    } else if (eq == std::string::npos) {
      return invalidArgument("bad --machine part '" + part +
                             "' (expected NODESxGPUS first, then key=value)");
    } else {
      const std::string key = part.substr(0, eq);
      BRAID_TRY(applyKey(m, key, part.substr(eq + 1)));
      nicsGiven = nicsGiven || key == "nics";
    }
    first = false;
  }
  // One NIC per GPU unless told otherwise, as on DGX-class nodes.
  if (!nicsGiven) m.nicsPerNode = m.gpusPerNode;
  if (m.nicsPerNode > m.gpusPerNode) {
    return invalidArgument("--machine has " + std::to_string(m.nicsPerNode) + " NICs for " +
                           std::to_string(m.gpusPerNode) +
                           " GPUs per node; braid-sim maps each GPU to one NIC, so nics <= gpus");
  }
  if (static_cast<long long>(m.nodes) * m.gpusPerNode > (1 << 24)) {
    return invalidArgument("--machine has more than 16M GPUs");
  }
  return m;
}

std::string describeMachine(const Machine& m) {
  char text[256];
  snprintf(text, sizeof(text),
           "%d node%s x %d GPUs, NVLink %s per GPU (%s per hop), %d NIC%s x %s per node (%s per "
           "hop)",
           m.nodes, m.nodes == 1 ? "" : "s", m.gpusPerNode,
           formatBandwidth(m.nvlinkBytesPerUs).c_str(), formatDuration(m.nvlinkLatencyUs).c_str(),
           m.nicsPerNode, m.nicsPerNode == 1 ? "" : "s", formatBandwidth(m.netBytesPerUs).c_str(),
           formatDuration(m.netLatencyUs).c_str());
  return text;
}

Machine defaultMachine(int nranks) {
  Machine m;
  m.gpusPerNode = nranks < 8 ? nranks : 8;
  m.nicsPerNode = m.gpusPerNode;
  m.nodes = (nranks + m.gpusPerNode - 1) / m.gpusPerNode;
  return m;
}

}  // namespace braid::sim
