// What braid-calibrate measures and how it turns the measurements into the
// figures of tune::Model: each figure is fitted by least squares on the
// model's own formula (tune::costShape), from braid-perf runs that force
// one algorithm and protocol.
//
//   callUs                  ring all_reduce on 1 rank: the intercept of
//                           time = callUs + bytes / copy rate
//   intraHost[p]            ring all_reduce, 2 <= N <= CPUs:
//                           time - callUs = hops * L + busBytes / B
//   intraHostShared[p]      the same with N > CPUs (ranks share CPUs)
//   tree[p]                 tree all_reduce, every N: the scales a, b of
//                           time - callUs = a * hops * L + busBytes / (b * B)
//                           with L, B the ring's link for that N
//   oneShot[p]              one-shot all_reduce up to --oneshot-max-bytes,
//                           2 <= N <= CPUs:
//                           time - callUs = base + peers * perPeer
//                                           + peers * bytes / read rate
//                           (base 0 when only one N qualifies)
//   oneShotShared[p]        the same with N > CPUs
//   p2p                     braid-perf sendrecv (a ring shift: each rank
//                           sends S bytes to the next and receives S from
//                           the previous in one group), 2 <= N <= CPUs:
//                           time - callUs = L + S / B
//   p2pShared               the same with N > CPUs
//
// What the library refuses (BRAID_ALGO / BRAID_PROTO not implemented yet)
// is skipped with a line saying so, and its figures keep the values of
// Model::calibratedDefaults(), reported as kept. A combination whose run
// fails (hangs past BRAID_TIMEOUT_MS, wrong sizes) is skipped the same way
// and listed at the end; braid-calibrate then exits with 3.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "calibrate/fit.h"
#include "calibrate/perf_runner.h"
#include "tune/cost_model.h"
#include "tune/select.h"

namespace braid::calibrate {

struct Settings {
  std::string perfPath;
  std::vector<int> ranks{1, 2, 3, 4};
  size_t minBytes = 8;
  size_t maxBytes = 16 << 20;
  /// One-shot is measured up to here: above its board's size (64 KiB,
  /// exec::OneShotBoard::kDefaultMaxBytes) the communicator runs the ring.
  size_t oneShotMaxBytes = 64 << 10;
  int iters = 30;
  int warmup = 5;
  int repeats = 3;
  int cores = 1;         ///< CPUs the ranks share (this process's affinity)
  bool validate = true;  ///< also compare the model with the other collectives
  /// The zero-copy threshold's sweep (zero_copy_sweep.h): sizes from here to
  /// zeroCopyMaxBytes by factors of 2.
  size_t zeroCopyMinBytes = 4 << 10;
  size_t zeroCopyMaxBytes = 16 << 20;
  enum class ZeroCopy { kAlso, kSkip, kOnly } zeroCopy = ZeroCopy::kAlso;
};

/// One figure of the model and where its value came from.
struct FigureNote {
  std::string name;    ///< "intraHost[simple]"
  std::string value;   ///< "0.12 us, 6.1 GB/s"
  std::string source;  ///< "measured: ring all_reduce N=2" or "kept: <why>"
  bool measured = false;
  FitError error;
};

class Calibration {
 public:
  explicit Calibration(Settings settings);

  /// Measures and fits every figure it can; an error only when braid-perf
  /// itself fails (not when the library refuses a combination).
  Status run();

  const tune::Model& model() const { return model_; }
  const std::vector<FigureNote>& notes() const { return notes_; }
  /// Lines of the comparison of the fitted model with every measurement.
  const std::vector<std::string>& validation() const { return validation_; }
  /// The selector against the measurements: per collective and rank count,
  /// how often the model's pick was the fastest measured combination, and
  /// each size where it was not.
  const std::vector<std::string>& selection() const { return selection_; }
  /// The runs braid-perf failed (not refusals): a broken implementation.
  const std::vector<std::string>& failures() const { return failures_; }

 private:
  using Key = std::tuple<int, int, int, int>;  // collective, algorithm, protocol, nranks

  /// The measurement of one combination, run once and kept; nullptr when refused.
  Result<const PerfResult*> measure(Collective collective, algo::Algorithm algorithm,
                                    algo::Protocol protocol, int nranks);
  /// The same for braid-perf sendrecv (point-to-point runs Simple only).
  Result<const PerfResult*> measureSendRecv(int nranks);
  /// Runs `request` with the settings' sweep; the result, or nothing when the
  /// library refused it or it failed (then recorded under `combo`, with `what`
  /// naming the run).
  Result<std::optional<PerfResult>> runOrSkip(PerfRequest request, const std::string& what,
                                              const std::string& combo);
  tune::Query query(Collective collective, const Sample& s, int nranks) const;
  bool sharesCores(int nranks) const { return nranks > settings_.cores; }

  Status fitCallOverhead();
  Status fitRingLinks(algo::Protocol protocol, bool shared);
  Status fitTreeScale(algo::Protocol protocol);
  Status fitOneShot(algo::Protocol protocol, bool shared);
  Status fitP2pLink(bool shared);
  /// The fit and the note that fitRingLinks and fitP2pLink share (calibration.cc).
  template <typename Query, typename Predict>
  Status fitLink(const std::string& name, const std::string& old, bool shared,
                 const std::vector<Observation>& obs,
                 const std::vector<std::pair<Query, double>>& points, tune::LinkCost* link,
                 const std::string& source, Predict predict);
  Status validate();
  Status checkSelection();
  Status checkSelectionAt(
      Collective collective, int n,
      const std::map<size_t, std::vector<std::pair<std::string, double>>>& bySize,
      const tune::Allowed& allowed);
  void keep(const std::string& name, const std::string& value, const std::string& why);

  Settings settings_;
  tune::Model model_;
  std::map<Key, PerfResult> runs_;
  std::map<int, PerfResult> sendRecvRuns_;  // by nranks
  // "ring/ll" (or "sendrecv") -> why it is skipped: the library refused it,
  // or a run failed.
  std::map<std::string, std::string> refusals_;
  std::vector<std::string> failures_;
  std::vector<FigureNote> notes_;
  std::vector<std::string> validation_;
  std::vector<std::string> selection_;
};

/// The body of Model::calibratedDefaults() for `model`, with a comment per
/// figure saying whether this run measured it.
std::string modelInitializer(const tune::Model& model, const std::vector<FigureNote>& notes,
                             const std::string& header);

}  // namespace braid::calibrate
