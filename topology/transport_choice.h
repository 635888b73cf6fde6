// Which transport serves each pair of ranks, from the path between them.
//
//   cuda_ipc  both ranks drive GPUs of one host that can map each other's
//             memory, and the path between the GPUs is no farther than the
//             P2P level (BRAID_P2P_LEVEL, NCCL_P2P_LEVEL as a fallback);
//   shm       otherwise on one host (and between ranks on host memory);
//   net       between hosts (socket or InfiniBand, chosen by the network code).
// An allow list (BRAID_TRANSPORTS) removes choices: a pair then takes the
// next one down the list (cuda_ipc, shm, net; net also serves ranks of one
// host, over the loopback), and a pair left with none is an error.
//
// These are pure functions: the caller reads the environment (Config) and,
// on a live machine, asks CUDA which GPUs can access each other.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "topology/graph.h"
#include "topology/paths.h"
#include "topology/placement.h"

namespace braid::topology {

enum class TransportKind : uint8_t {
  kNone,  ///< a rank and itself
  kCudaIpc,
  kShm,
  kNet,
};

/// "-", "cuda_ipc", "shm", "net"
const char* transportName(TransportKind kind);

/// A set of transports, as BRAID_TRANSPORTS lists them.
class TransportSet {
 public:
  static TransportSet all() { return TransportSet(0b1110); }
  /// A comma-separated list of cuda_ipc, shm, net (socket and ibverbs are
  /// accepted as names of net); empty means all. Unknown names are errors.
  static Result<TransportSet> parse(const std::string& list);

  bool allows(TransportKind kind) const { return (bits_ >> static_cast<int>(kind)) & 1u; }
  /// "cuda_ipc,shm,net"
  std::string describe() const;

 private:
  explicit TransportSet(unsigned bits) : bits_(bits) {}
  unsigned bits_;
};

struct TransportPolicy {
  /// The farthest path over which GPUs talk by cuda_ipc; unset means
  /// defaultP2pLevel() of the host.
  std::optional<PathType> p2pLevel;
  TransportSet allowed = TransportSet::all();
  /// Whether GPU nodes a and b can map each other's memory
  /// (cudaDeviceCanAccessPeer on a live machine); unset means they can.
  std::function<bool(int gpuA, int gpuB)> canAccessPeer;
};

/// The P2P level braid uses when none is set: PXB, so that GPUs talk
/// directly through PCIe switches but not through a CPU's host bridge, whose
/// peer-to-peer forwarding is slow or missing on Intel and ARM root
/// complexes; SYS on AMD CPUs, whose root complexes forward it well.
PathType defaultP2pLevel(const Graph& graph, int host);

/// The transport between ranks a and b (kNone when a == b).
Result<TransportKind> chooseTransport(const Graph& graph, const Paths& paths,
                                      const Placement& placement, int a, int b,
                                      const TransportPolicy& policy);

/// chooseTransport for every pair: [a][b].
using TransportMatrix = std::vector<std::vector<TransportKind>>;
Result<TransportMatrix> chooseTransports(const Graph& graph, const Paths& paths,
                                         const Placement& placement, const TransportPolicy& policy);

}  // namespace braid::topology
