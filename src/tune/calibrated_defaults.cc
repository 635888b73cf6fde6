// The figures braid-calibrate measured for the shm transport on the
// development VM (2 vCPUs, AMD EPYC, no GPU). docs/tuning.md says how they
// were measured and how well the model fits them. To re-measure: build
// braid-calibrate (bench/calibrate), run it on an idle machine, and paste the
// body it prints here.
//
// What is not measured here:
// - interHost: measured by bench/calibrate-net.sh instead (braid's socket
//   transport between two network namespaces of this VM, over a veth pair),
//   and capped by the machine's NICs where the topology plans rings on them
//   (Model::fitNetwork); braid-sim fills interHost from the machine it models.
// - hostCores: a fact of the machine, which the communicator sets.
#include "tune/cost_model.h"

namespace braid::tune {

Model Model::calibratedDefaults() {
  constexpr int kSimple = static_cast<int>(algo::Protocol::kSimple);
  constexpr int kLl = static_cast<int>(algo::Protocol::kLl);
  // clang-format off
  // braid-calibrate 2026-11-29, 2 CPUs, load 1.09
  Model m;
  m.callUs = 0.1939;  // measured: ring/simple all_reduce N=1
  m.intraHost[kSimple] = {0.1464, 9.815};  // measured: ring/simple all_reduce N=2
  m.intraHostShared[kSimple] = {1.873, 4.609};  // measured: ring/simple all_reduce N=3,4
  // bench/calibrate-net.sh 2026-12-06 08:19, quiet, with the 32 MiB FIFOs that oversubscribed
  // host ranks take across hosts (comm/links.cc): 8 B in 60.2 us, 16 MiB in 13.0 ms
  m.interHost[kSimple] = {30, 1.292};  // measured: ring/simple all_reduce N=2 over 2 hosts
  m.tree[kSimple] = {0.7194, 0.7006};  // measured: tree/simple all_reduce N=2,3,4
  m.oneShot[kSimple] = {0, 0.1806, 5.347};  // measured: oneshot/simple all_reduce N=2 (one rank count: base folded into per peer)
  m.oneShotShared[kSimple] = {2.994, 0.3506, 6.109};  // measured: oneshot/simple all_reduce N=3,4
  m.intraHost[kLl] = {0.1171, 2.277};  // measured: ring/ll all_reduce N=2
  m.intraHostShared[kLl] = {1.552, 1.086};  // measured: ring/ll all_reduce N=3,4
  m.interHost[kLl] = m.interHost[kSimple];  // LL does not run between hosts
  m.tree[kLl] = {1.343, 1.094};  // measured: tree/ll all_reduce N=2,3,4
  m.oneShot[kLl] = {0, 0.1624, 1.42};  // measured: oneshot/ll all_reduce N=2 (one rank count: base folded into per peer)
  m.oneShotShared[kLl] = {1.31, 0.9663, 0.9962};  // measured: oneshot/ll all_reduce N=3,4
  m.p2p = {0.3126, 12.52};  // measured: sendrecv N=2
  m.p2pShared = {2.595, 5.13};  // measured: sendrecv N=3,4
  // clang-format on
  // A slower network in the plan (a 1 Gb/s NIC) lowers interHost; a faster one does not raise
  // it above what the sockets were measured to move (Model::fitNetwork).
  m.interHostMeasured = true;
  // bench/compare-deterministic.sh 4 (2026-11-29): the ring's owner-computes
  // form took 1.11x-2.40x (median 1.45x) of the plain ring from 8 B to 16 MiB;
  // the tree and the one-shot reduce in the canonical order anyway (0.89x-1.02x,
  // noise). docs/tuning.md, "Deterministic mode cost".
  m.deterministicSlowdown[static_cast<int>(algo::Algorithm::kRing)] = 1.45;
  return m;
}

}  // namespace braid::tune
