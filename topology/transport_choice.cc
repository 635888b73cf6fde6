#include "topology/transport_choice.h"

#include <sstream>

namespace braid::topology {

namespace {

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

}  // namespace

const char* transportName(TransportKind kind) {
  switch (kind) {
    case TransportKind::kNone:
      return "-";
    case TransportKind::kCudaIpc:
      return "cuda_ipc";
    case TransportKind::kShm:
      return "shm";
    case TransportKind::kNet:
      return "net";
  }
  return "?";
}

Result<TransportSet> TransportSet::parse(const std::string& list) {
  if (trimmed(list).empty()) return all();
  unsigned bits = 0;
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    const std::string name = trimmed(item);
    if (name == "cuda_ipc") {
      bits |= 1u << static_cast<int>(TransportKind::kCudaIpc);
    } else if (name == "shm") {
      bits |= 1u << static_cast<int>(TransportKind::kShm);
    } else if (name == "net" || name == "socket" || name == "ibverbs") {
      bits |= 1u << static_cast<int>(TransportKind::kNet);
    } else {
      return invalidArgument("transport '" + name + "' in '" + list +
                             "' is not one of cuda_ipc, shm, net (socket, ibverbs)");
    }
  }
  return TransportSet(bits);
}

std::string TransportSet::describe() const {
  std::string out;
  for (TransportKind kind : {TransportKind::kCudaIpc, TransportKind::kShm, TransportKind::kNet}) {
    if (!allows(kind)) continue;
    if (!out.empty()) out += ",";
    out += transportName(kind);
  }
  return out.empty() ? "none" : out;
}

PathType defaultP2pLevel(const Graph& graph, int host) {
  for (int cpu : graph.nodesOfType(NodeType::kCpu, host)) {
    const std::string& vendor = graph.node(cpu).cpuVendor;
    if (vendor == "AuthenticAMD" || vendor == "HygonGenuine") return PathType::kSys;
  }
  return PathType::kPxb;
}

Result<TransportKind> chooseTransport(const Graph& graph, const Paths& paths,
                                      const Placement& placement, int a, int b,
                                      const TransportPolicy& policy) {
  if (a == b) return TransportKind::kNone;
  const RankPlace& pa = placement[a];
  const RankPlace& pb = placement[b];
  const TransportSet& allowed = policy.allowed;
  auto none = [&](const std::string& why) {
    return invalidUsage("ranks " + std::to_string(a) + " and " + std::to_string(b) + " " + why +
                        ", but BRAID_TRANSPORTS allows only " + allowed.describe());
  };
  if (pa.host != pb.host) {
    if (allowed.allows(TransportKind::kNet)) return TransportKind::kNet;
    return none("are on different hosts and need net");
  }
  const bool gpus =
      graph.node(pa.device).type == NodeType::kGpu && graph.node(pb.device).type == NodeType::kGpu;
  std::string whyNotIpc = "share a host";
  if (gpus && allowed.allows(TransportKind::kCudaIpc)) {
    const PathType level = policy.p2pLevel.value_or(defaultP2pLevel(graph, pa.host));
    const PathType path = paths.type(pa.device, pb.device);
    const bool peers = pa.device == pb.device || !policy.canAccessPeer ||
                       policy.canAccessPeer(pa.device, pb.device);
    // LOC as a level means "never", as NCCL_P2P_LEVEL=LOC does.
    if (level != PathType::kLoc && path <= level && peers) return TransportKind::kCudaIpc;
    whyNotIpc = !peers ? "have GPUs that cannot access each other"
                       : std::string("have GPUs ") + pathTypeName(path) +
                             " apart, beyond the P2P level " + pathTypeName(level);
  }
  if (allowed.allows(TransportKind::kShm)) return TransportKind::kShm;
  if (allowed.allows(TransportKind::kNet)) return TransportKind::kNet;
  return none(whyNotIpc);
}

Result<TransportMatrix> chooseTransports(const Graph& graph, const Paths& paths,
                                         const Placement& placement,
                                         const TransportPolicy& policy) {
  const int n = static_cast<int>(placement.size());
  TransportMatrix matrix(n, std::vector<TransportKind>(n, TransportKind::kNone));
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      BRAID_ASSIGN_OR_RETURN(matrix[a][b], chooseTransport(graph, paths, placement, a, b, policy));
    }
  }
  return matrix;
}

}  // namespace braid::topology
