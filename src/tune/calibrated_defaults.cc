// The figures braid-calibrate measured for the shm transport on the
// development VM (2 vCPUs, AMD EPYC, no GPU). docs/tuning.md says how they
// were measured and how well the model fits them. To re-measure: build
// braid-calibrate (bench/calibrate), run it on an idle machine, and paste the
// body it prints here.
//
// What is not measured here:
// - interHost: braid has no inter-host transport yet, so the network gets
//   the host's figures. Multi-host predictions with these defaults are
//   placeholders; braid-sim fills interHost from the machine it models.
// - hostCores: a fact of the machine, which the communicator sets.
#include "tune/cost_model.h"

namespace braid::tune {

Model Model::calibratedDefaults() {
  constexpr int kSimple = static_cast<int>(algo::Protocol::kSimple);
  constexpr int kLl = static_cast<int>(algo::Protocol::kLl);
  // clang-format off
  // braid-calibrate 2026-11-29, 2 CPUs, load 0.52
  Model m;
  m.callUs = 0.2249;  // measured: ring/simple all_reduce N=1
  m.intraHost[kSimple] = {0.1867, 8.945};  // measured: ring/simple all_reduce N=2
  m.intraHostShared[kSimple] = {1.842, 4.205};  // measured: ring/simple all_reduce N=3,4
  m.interHost[kSimple] = m.intraHost[kSimple];  // PROVISIONAL: no inter-host transport to measure yet
  m.tree[kSimple] = {0.8342, 0.6849};  // measured: tree/simple all_reduce N=2,3,4
  m.oneShot[kSimple] = {0, 0.4333, 2.346};  // measured: oneshot/simple all_reduce N=2 (one rank count: base folded into per peer)
  m.oneShotShared[kSimple] = {3.237, 0.5862, 2.398};  // measured: oneshot/simple all_reduce N=3,4
  m.intraHost[kLl] = {0.08209, 1.988};  // measured: ring/ll all_reduce N=2
  m.intraHostShared[kLl] = {1.554, 1.253};  // measured: ring/ll all_reduce N=3,4
  m.interHost[kLl] = m.intraHost[kLl];  // PROVISIONAL: no inter-host transport to measure yet
  m.tree[kLl] = {1.121, 0.714};  // measured: tree/ll all_reduce N=2,3,4
  m.oneShot[kLl] = {0, 0.1412, 1.286};  // measured: oneshot/ll all_reduce N=2 (one rank count: base folded into per peer)
  m.oneShotShared[kLl] = {0, 1.678, 0.6684};  // measured: oneshot/ll all_reduce N=3,4
  // clang-format on
  // bench/compare-deterministic.sh 4 (2026-11-29): the ring's owner-computes
  // form took 1.11x-2.40x (median 1.45x) of the plain ring from 8 B to 16 MiB;
  // the tree and the one-shot reduce in the canonical order anyway (0.89x-1.02x,
  // noise). docs/tuning.md, "Deterministic mode cost".
  m.deterministicSlowdown[static_cast<int>(algo::Algorithm::kRing)] = 1.45;
  return m;
}

}  // namespace braid::tune
