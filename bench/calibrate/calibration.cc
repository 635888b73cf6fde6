#include "calibrate/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

namespace braid::calibrate {
namespace {

using algo::Algorithm;
using algo::Protocol;
using tune::CostShape;

constexpr double kBytesPerUsPerGBs = 1e3;  // 1 GB/s moves 1e3 bytes per microsecond

std::string format(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), fmt, a, b, c);
  return buf;
}

std::string comboName(Algorithm a, Protocol p) {
  return std::string(algo::algorithmName(a)) + "/" + algo::protocolName(p);
}

std::string runName(Collective c, Algorithm a, Protocol p, int n) {
  return comboName(a, p) + " " + collectiveFlagName(c) + " N=" + std::to_string(n);
}

// Every regressor times its coefficient.
double dot(const std::vector<double>& x, const std::vector<double>& beta) {
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) sum += x[i] * beta[i];
  return sum;
}

// A sendrecv row of S bytes: every rank sends S to the next and receives S
// from the previous, all of it in one batch.
tune::P2pQuery sendRecvQuery(const Sample& s, int nranks) {
  tune::P2pQuery q;
  q.sendBytes = s.bytes;
  q.recvBytes = s.bytes;
  q.nranks = nranks;
  return q;
}

// One line of the comparison of the model with a measured sweep: the median
// and worst relative error, and the size of the worst.
std::string validationLine(const std::string& what, const std::vector<Sample>& samples,
                           const std::vector<double>& predicted) {
  std::vector<double> measured;
  size_t worst = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    measured.push_back(samples[i].us);
    const double error = std::fabs(predicted[i] - samples[i].us) / samples[i].us;
    if (error > std::fabs(predicted[worst] - samples[worst].us) / samples[worst].us) worst = i;
  }
  const FitError e = relativeError(measured, predicted);
  char line[256];
  std::snprintf(line, sizeof(line),
                "%-34s median error %4.0f%%  max %5.0f%% at %zu B (measured %.4g us, "
                "model %.4g us)",
                what.c_str(), 100 * e.median, 100 * e.max, samples[worst].bytes, samples[worst].us,
                predicted[worst]);
  return line;
}

}  // namespace

Calibration::Calibration(Settings settings) : settings_(std::move(settings)) {
  model_ = tune::Model::calibratedDefaults();
  model_.hostCores = settings_.cores;
}

Result<const PerfResult*> Calibration::measure(Collective collective, Algorithm algorithm,
                                               Protocol protocol, int nranks) {
  const Key key{static_cast<int>(collective), static_cast<int>(algorithm),
                static_cast<int>(protocol), nranks};
  auto found = runs_.find(key);
  if (found != runs_.end()) return &found->second;
  PerfRequest request;
  request.collective = collective;
  request.nranks = nranks;
  request.algorithm = algorithm;
  request.protocol = protocol;
  request.maxBytes = settings_.maxBytes;
  if (algorithm == Algorithm::kOneShot) {
    request.maxBytes = std::min(request.maxBytes, settings_.oneShotMaxBytes);
  }
  BRAID_ASSIGN_OR_RETURN(std::optional<PerfResult> result,
                         runOrSkip(request, runName(collective, algorithm, protocol, nranks),
                                   comboName(algorithm, protocol)));
  if (!result) return nullptr;
  return &runs_.emplace(key, std::move(*result)).first->second;
}

Result<const PerfResult*> Calibration::measureSendRecv(int nranks) {
  auto found = sendRecvRuns_.find(nranks);
  if (found != sendRecvRuns_.end()) return &found->second;
  PerfRequest request;
  request.test = "sendrecv";
  request.nranks = nranks;
  request.protocol = Protocol::kSimple;  // what point-to-point runs anyway
  request.maxBytes = settings_.maxBytes;
  BRAID_ASSIGN_OR_RETURN(std::optional<PerfResult> result,
                         runOrSkip(request, "sendrecv N=" + std::to_string(nranks), request.test));
  if (!result) return nullptr;
  return &sendRecvRuns_.emplace(nranks, std::move(*result)).first->second;
}

Result<std::optional<PerfResult>> Calibration::runOrSkip(PerfRequest request,
                                                         const std::string& what,
                                                         const std::string& combo) {
  if (refusals_.count(combo) != 0) return std::optional<PerfResult>();
  request.perfPath = settings_.perfPath;
  request.minBytes = settings_.minBytes;
  request.iters = settings_.iters;
  request.warmup = settings_.warmup;
  request.repeats = settings_.repeats;
  std::fprintf(stderr, "braid-calibrate: %s\n", what.c_str());
  BRAID_ASSIGN_OR_RETURN(PerfResult result, runPerf(request));
  if (result.refused) {
    std::printf("skip %s: the library refused it (%s)\n", combo.c_str(), result.reason.c_str());
    refusals_[combo] = "refused: " + result.reason;
    return std::optional<PerfResult>();
  }
  if (result.failed) {
    std::printf("FAILED %s, skipping %s: %s\n", what.c_str(), combo.c_str(), result.reason.c_str());
    refusals_[combo] = "FAILED on " + what;
    failures_.push_back(what);
    return std::optional<PerfResult>();
  }
  return std::optional<PerfResult>(std::move(result));
}

tune::Query Calibration::query(Collective collective, const Sample& s, int nranks) const {
  tune::Query q;
  q.collective = collective;
  q.bytes = s.bytes;
  q.nranks = nranks;
  return q;
}

void Calibration::keep(const std::string& name, const std::string& value, const std::string& why) {
  notes_.push_back({name, value, "kept: " + why, false, {}});
}

Status Calibration::run() {
  BRAID_TRY(fitCallOverhead());
  for (int p = 0; p < algo::kNumProtocols; ++p) {
    BRAID_TRY(fitRingLinks(static_cast<Protocol>(p), false));
    BRAID_TRY(fitRingLinks(static_cast<Protocol>(p), true));
    // Between hosts: bench/calibrate-net.sh measures it (this machine's ranks share one host).
    model_.interHost[p] = tune::Model::calibratedDefaults().interHost[p];
    keep(std::string("interHost[") + algo::protocolName(static_cast<Protocol>(p)) + "]", "kept",
         "measured by bench/calibrate-net.sh, not here");
  }
  BRAID_TRY(fitP2pLink(false));
  BRAID_TRY(fitP2pLink(true));
  for (int p = 0; p < algo::kNumProtocols; ++p) {
    BRAID_TRY(fitTreeScale(static_cast<Protocol>(p)));
    BRAID_TRY(fitOneShot(static_cast<Protocol>(p), false));
    BRAID_TRY(fitOneShot(static_cast<Protocol>(p), true));
  }
  BRAID_TRY(validate());
  return checkSelection();
}

Status Calibration::fitCallOverhead() {
  bool haveOne = false;
  for (int n : settings_.ranks) haveOne = haveOne || n == 1;
  if (!haveOne) {
    keep("callUs", format("%.4g us", model_.callUs), "--ranks has no 1");
    return Status::success();
  }
  BRAID_ASSIGN_OR_RETURN(const PerfResult* run,
                         measure(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple, 1));
  if (run == nullptr) {
    keep("callUs", format("%.4g us", model_.callUs), refusals_["ring/simple"]);
    return Status::success();
  }
  std::vector<Observation> obs;
  for (const Sample& s : run->samples) {
    obs.push_back({{1.0, s.bytes / kBytesPerUsPerGBs}, s.us, 1 / s.us});
  }
  auto beta = nonNegativeLeastSquares(obs);
  if (!beta) return internalError("the one-rank sweep does not determine the call overhead");
  std::vector<double> measured, predicted;
  for (const Observation& o : obs) {
    measured.push_back(o.y);
    predicted.push_back(dot(o.x, *beta));
  }
  model_.callUs = (*beta)[0];
  notes_.push_back(
      {"callUs",
       format("%.4g us (local copy %.4g GB/s, not a model figure)", model_.callUs, 1 / (*beta)[1]),
       "measured: ring/simple all_reduce N=1", true, relativeError(measured, predicted)});
  return Status::success();
}

// Fits a hop's latency and bandwidth to `obs` (time less callUs against
// {1 or hops, bytes}), stores them in *link, and notes how far `predict`,
// with them, is from each measured point. Keeps the old figure, saying why,
// when there is nothing to fit or the fit fails.
template <typename Query, typename Predict>
Status Calibration::fitLink(const std::string& name, const std::string& old, bool shared,
                            const std::vector<Observation>& obs,
                            const std::vector<std::pair<Query, double>>& points,
                            tune::LinkCost* link, const std::string& source, Predict predict) {
  if (obs.empty()) {
    keep(name, old, shared ? "no --ranks above the CPU count" : "no --ranks in [2, CPU count]");
    return Status::success();
  }
  auto beta = nonNegativeLeastSquares(obs);
  if (!beta || !((*beta)[1] > 0)) {
    keep(name, old, "the fit failed (measurements too noisy or too few sizes)");
    return Status::success();
  }
  *link = {(*beta)[0], 1 / (*beta)[1]};
  std::vector<double> measured, predicted;
  for (const auto& [q, us] : points) {
    BRAID_ASSIGN_OR_RETURN(const double model, predict(q));
    measured.push_back(us);
    predicted.push_back(model);
  }
  notes_.push_back({name, format("%.4g us, %.4g GB/s", link->latencyUs, link->bandwidthGBs), source,
                    true, relativeError(measured, predicted)});
  return Status::success();
}

Status Calibration::fitRingLinks(Protocol protocol, bool shared) {
  const int p = static_cast<int>(protocol);
  const std::string name =
      std::string(shared ? "intraHostShared[" : "intraHost[") + algo::protocolName(protocol) + "]";
  tune::LinkCost& link = shared ? model_.intraHostShared[p] : model_.intraHost[p];
  const std::string old = format("%.4g us, %.4g GB/s", link.latencyUs, link.bandwidthGBs);
  std::vector<Observation> obs;
  std::vector<std::pair<tune::Query, double>> points;
  std::string used;
  for (int n : settings_.ranks) {
    if (n < 2 || sharesCores(n) != shared) continue;
    BRAID_ASSIGN_OR_RETURN(const PerfResult* run,
                           measure(Collective::kAllReduce, Algorithm::kRing, protocol, n));
    if (run == nullptr) {
      keep(name, old, refusals_[comboName(Algorithm::kRing, protocol)]);
      return Status::success();
    }
    used += (used.empty() ? " N=" : ",") + std::to_string(n);
    for (const Sample& s : run->samples) {
      const tune::Query q = query(Collective::kAllReduce, s, n);
      BRAID_ASSIGN_OR_RETURN(const CostShape shape, tune::costShape(q, Algorithm::kRing));
      obs.push_back({{shape.intraHops + shape.interHops, shape.busBytes / kBytesPerUsPerGBs},
                     s.us - model_.callUs,
                     1 / s.us});
      points.push_back({q, s.us});
    }
  }
  return fitLink(
      name, old, shared, obs, points, &link,
      "measured: " + comboName(Algorithm::kRing, protocol) + " all_reduce" + used,
      [&](const tune::Query& q) { return tune::predictUs(model_, q, Algorithm::kRing, protocol); });
}

Status Calibration::fitP2pLink(bool shared) {
  const std::string name = shared ? "p2pShared" : "p2p";
  tune::LinkCost& link = shared ? model_.p2pShared : model_.p2p;
  const std::string old = link.bandwidthGBs > 0
                              ? format("%.4g us, %.4g GB/s", link.latencyUs, link.bandwidthGBs)
                              : std::string("unset: the ring's Simple hop stands in");
  std::vector<Observation> obs;
  std::vector<std::pair<tune::P2pQuery, double>> points;
  std::string used;
  for (int n : settings_.ranks) {
    if (n < 2 || sharesCores(n) != shared) continue;
    BRAID_ASSIGN_OR_RETURN(const PerfResult* run, measureSendRecv(n));
    if (run == nullptr) {
      keep(name, old, refusals_["sendrecv"]);
      return Status::success();
    }
    used += (used.empty() ? " N=" : ",") + std::to_string(n);
    for (const Sample& s : run->samples) {
      // One hop latency whatever N (every transfer is in flight at once),
      // and S over the bandwidth: a rank's sends and receives overlap.
      obs.push_back({{1.0, s.bytes / kBytesPerUsPerGBs}, s.us - model_.callUs, 1 / s.us});
      points.push_back({sendRecvQuery(s, n), s.us});
    }
  }
  return fitLink(name, old, shared, obs, points, &link, "measured: sendrecv" + used,
                 [&](const tune::P2pQuery& q) { return tune::predictP2pUs(model_, q); });
}

Status Calibration::fitTreeScale(Protocol protocol) {
  const int p = static_cast<int>(protocol);
  const std::string name = std::string("tree[") + algo::protocolName(protocol) + "]";
  tune::HopScale& scale = model_.tree[p];
  const std::string old = format("latency x%.4g, bandwidth x%.4g", scale.latency, scale.bandwidth);
  // The ring links this run measured: the tree is fitted relative to them.
  std::set<std::string> measuredLinks;
  for (const FigureNote& note : notes_) {
    if (note.measured) measuredLinks.insert(note.name);
  }
  std::vector<Observation> obs;
  std::vector<std::pair<tune::Query, double>> points;
  std::string used;
  for (int n : settings_.ranks) {
    if (n < 2) continue;
    const bool shared = sharesCores(n);
    const std::string linkName = std::string(shared ? "intraHostShared[" : "intraHost[") +
                                 algo::protocolName(protocol) + "]";
    if (measuredLinks.count(linkName) == 0) continue;
    BRAID_ASSIGN_OR_RETURN(const PerfResult* run,
                           measure(Collective::kAllReduce, Algorithm::kTree, protocol, n));
    if (run == nullptr) {
      keep(name, old, refusals_[comboName(Algorithm::kTree, protocol)]);
      return Status::success();
    }
    const tune::LinkCost& link = shared ? model_.intraHostShared[p] : model_.intraHost[p];
    used += (used.empty() ? " N=" : ",") + std::to_string(n);
    for (const Sample& s : run->samples) {
      const tune::Query q = query(Collective::kAllReduce, s, n);
      BRAID_ASSIGN_OR_RETURN(const CostShape shape, tune::costShape(q, Algorithm::kTree));
      obs.push_back({{(shape.intraHops + shape.interHops) * link.latencyUs,
                      shape.busBytes / (link.bandwidthGBs * kBytesPerUsPerGBs)},
                     s.us - model_.callUs,
                     1 / s.us});
      points.push_back({q, s.us});
    }
  }
  if (obs.empty()) {
    keep(name, old, "no ring link of this protocol was measured to scale it against");
    return Status::success();
  }
  auto beta = nonNegativeLeastSquares(obs);
  if (!beta || !((*beta)[1] > 0)) {
    keep(name, old, "the fit failed (measurements too noisy or too few sizes)");
    return Status::success();
  }
  scale = {(*beta)[0], 1 / (*beta)[1]};
  std::vector<double> measured, predicted;
  for (const auto& [q, us] : points) {
    BRAID_ASSIGN_OR_RETURN(const double model,
                           tune::predictUs(model_, q, Algorithm::kTree, protocol));
    measured.push_back(us);
    predicted.push_back(model);
  }
  notes_.push_back({name, format("latency x%.4g, bandwidth x%.4g", scale.latency, scale.bandwidth),
                    "measured: " + comboName(Algorithm::kTree, protocol) + " all_reduce" + used,
                    true, relativeError(measured, predicted)});
  return Status::success();
}

Status Calibration::fitOneShot(Protocol protocol, bool shared) {
  const std::string name =
      std::string(shared ? "oneShotShared[" : "oneShot[") + algo::protocolName(protocol) + "]";
  const int p = static_cast<int>(protocol);
  tune::OneShotCost& c = shared ? model_.oneShotShared[p] : model_.oneShot[p];
  const std::string old =
      format("base %.4g us, per peer %.4g us, read %.4g GB/s", c.baseUs, c.perPeerUs, c.readGBs);
  std::vector<Observation> obs;
  std::vector<std::pair<tune::Query, double>> points;
  std::set<int> counts;
  for (int n : settings_.ranks) {
    if (n < 2 || sharesCores(n) != shared) continue;
    BRAID_ASSIGN_OR_RETURN(const PerfResult* run,
                           measure(Collective::kAllReduce, Algorithm::kOneShot, protocol, n));
    if (run == nullptr) {
      keep(name, old, refusals_[comboName(Algorithm::kOneShot, protocol)]);
      return Status::success();
    }
    counts.insert(n);
    for (const Sample& s : run->samples) {
      const double peers = n - 1;
      obs.push_back(
          {{1.0, peers, peers * s.bytes / kBytesPerUsPerGBs}, s.us - model_.callUs, 1 / s.us});
      points.push_back({query(Collective::kAllReduce, s, n), s.us});
    }
  }
  if (counts.empty()) {
    keep(name, old, shared ? "no --ranks above the CPU count" : "no --ranks in [2, CPU count]");
    return Status::success();
  }
  // With one rank count the base and the per-peer cost move together: all
  // of it goes to the per-peer cost, which is what grows with more ranks.
  const bool oneCount = counts.size() == 1;
  if (oneCount) {
    for (Observation& o : obs) o.x.erase(o.x.begin());
  }
  auto beta = nonNegativeLeastSquares(obs);
  if (beta && oneCount) beta->insert(beta->begin(), 0.0);
  if (!beta || !((*beta)[2] > 0)) {
    keep(name, old, "the fit failed (measurements too noisy or too few sizes)");
    return Status::success();
  }
  c = {(*beta)[0], (*beta)[1], 1 / (*beta)[2]};
  std::vector<double> measured, predicted;
  for (const auto& [q, us] : points) {
    BRAID_ASSIGN_OR_RETURN(const double model,
                           tune::predictUs(model_, q, Algorithm::kOneShot, protocol));
    measured.push_back(us);
    predicted.push_back(model);
  }
  std::string used;
  for (int n : counts) used += (used.empty() ? " N=" : ",") + std::to_string(n);
  notes_.push_back(
      {name,
       format("base %.4g us, per peer %.4g us, read %.4g GB/s", c.baseUs, c.perPeerUs, c.readGBs),
       "measured: " + comboName(Algorithm::kOneShot, protocol) + " all_reduce" + used +
           (oneCount ? " (one rank count: base folded into per peer)" : ""),
       true, relativeError(measured, predicted)});
  return Status::success();
}

Status Calibration::validate() {
  const Collective all[] = {Collective::kAllReduce, Collective::kReduceScatter,
                            Collective::kAllGather, Collective::kBroadcast, Collective::kReduce};
  for (Collective c : all) {
    if (!settings_.validate && c != Collective::kAllReduce) continue;
    for (int a = 0; a < algo::kNumAlgorithms; ++a) {
      for (int p = 0; p < algo::kNumProtocols; ++p) {
        const auto algorithm = static_cast<Algorithm>(a);
        const auto protocol = static_cast<Protocol>(p);
        for (int n : settings_.ranks) {
          tune::Query probe;
          probe.collective = c;
          probe.nranks = n;
          if (n < 2 || !tune::supports(algorithm, probe)) continue;
          BRAID_ASSIGN_OR_RETURN(const PerfResult* run, measure(c, algorithm, protocol, n));
          if (run == nullptr) break;
          std::vector<double> predicted;
          for (const Sample& s : run->samples) {
            BRAID_ASSIGN_OR_RETURN(const double model,
                                   tune::predictUs(model_, query(c, s, n), algorithm, protocol));
            predicted.push_back(model);
          }
          validation_.push_back(
              validationLine(runName(c, algorithm, protocol, n), run->samples, predicted));
        }
      }
    }
  }
  // Point-to-point: the sendrecv sweeps the p2p figures were fitted on.
  for (const auto& [n, run] : sendRecvRuns_) {
    std::vector<double> predicted;
    for (const Sample& s : run.samples) {
      BRAID_ASSIGN_OR_RETURN(const double model, tune::predictP2pUs(model_, sendRecvQuery(s, n)));
      predicted.push_back(model);
    }
    validation_.push_back(
        validationLine("sendrecv N=" + std::to_string(n), run.samples, predicted));
  }
  return Status::success();
}

Status Calibration::checkSelection() {
  tune::Allowed allowed;
  allowed.oneShotMaxBytes = settings_.oneShotMaxBytes;
  const Collective all[] = {Collective::kAllReduce, Collective::kReduceScatter,
                            Collective::kAllGather, Collective::kBroadcast, Collective::kReduce};
  for (Collective collective : all) {
    for (int n : settings_.ranks) {
      if (n < 2) continue;
      // size -> (combination, measured us) of every run of this collective at n ranks
      std::map<size_t, std::vector<std::pair<std::string, double>>> bySize;
      for (const auto& [key, run] : runs_) {
        const auto [c, a, p, ranks] = key;
        if (c != static_cast<int>(collective) || ranks != n) continue;
        const std::string name = comboName(static_cast<Algorithm>(a), static_cast<Protocol>(p));
        for (const Sample& s : run.samples) bySize[s.bytes].push_back({name, s.us});
      }
      BRAID_TRY(checkSelectionAt(collective, n, bySize, allowed));
    }
  }
  return Status::success();
}

Status Calibration::checkSelectionAt(
    Collective collective, int n,
    const std::map<size_t, std::vector<std::pair<std::string, double>>>& bySize,
    const tune::Allowed& allowed) {
  const std::string what = std::string(collectiveFlagName(collective)) + " N=" + std::to_string(n);
  int right = 0, sizes = 0;
  double worst = 1;
  size_t worstBytes = 0;
  for (const auto& [bytes, times] : bySize) {
    tune::Query q;
    q.collective = collective;
    q.bytes = bytes;
    q.nranks = n;
    BRAID_ASSIGN_OR_RETURN(const tune::Choice choice, tune::choose(model_, q, allowed));
    const std::string picked = comboName(choice.algorithm, choice.protocol);
    auto best = std::min_element(times.begin(), times.end(),
                                 [](const auto& x, const auto& y) { return x.second < y.second; });
    auto mine =
        std::find_if(times.begin(), times.end(), [&](const auto& x) { return x.first == picked; });
    if (mine == times.end()) continue;  // the pick was not measured at this size
    ++sizes;
    const double ratio = mine->second / best->second;
    if (mine == best) {
      ++right;
      continue;
    }
    if (ratio > worst) worst = ratio, worstBytes = bytes;
    char line[200];
    std::snprintf(line, sizeof(line),
                  "%-20s %9zu B: fastest %-14s %9.4g us; model picks %-14s %9.4g us (%.2fx)",
                  what.c_str(), bytes, best->first.c_str(), best->second, picked.c_str(),
                  mine->second, ratio);
    selection_.push_back(line);
  }
  if (sizes == 0) return Status::success();
  char summary[160];
  std::snprintf(summary, sizeof(summary),
                "%-20s the pick is the fastest measured at %d of %d sizes; worst %.2fx%s",
                what.c_str(), right, sizes, worst,
                worstBytes == 0 ? "" : (" at " + std::to_string(worstBytes) + " B").c_str());
  selection_.push_back(summary);
  return Status::success();
}

std::string modelInitializer(const tune::Model& m, const std::vector<FigureNote>& notes,
                             const std::string& header) {
  auto source = [&](const std::string& name) {
    for (const FigureNote& n : notes) {
      if (n.name == name) return n.measured ? n.source : "PROVISIONAL, " + n.source;
    }
    return std::string("not measured by braid-calibrate");
  };
  static const char* const kProto[] = {"kSimple", "kLl"};
  std::ostringstream o;
  // Comments run past 100 columns: the block keeps clang-format away.
  o << "  // clang-format off\n";
  o << "  // " << header << "\n";
  o << "  Model m;\n";
  o << format("  m.callUs = %.4g;", m.callUs) << "  // " << source("callUs") << "\n";
  for (int p = 0; p < algo::kNumProtocols; ++p) {
    const std::string proto = algo::protocolName(static_cast<Protocol>(p));
    auto link = [&](const char* field, const tune::LinkCost& l) {
      o << "  m." << field << "[" << kProto[p]
        << "] = " << format("{%.4g, %.4g};", l.latencyUs, l.bandwidthGBs) << "  // "
        << source(std::string(field) + "[" + proto + "]") << "\n";
    };
    link("intraHost", m.intraHost[p]);
    link("intraHostShared", m.intraHostShared[p]);
    // The network's figures come from bench/calibrate-net.sh: today's stay as they are.
    o << "  m.interHost[" << kProto[p]
      << "] = " << format("{%.4g, %.4g};", m.interHost[p].latencyUs, m.interHost[p].bandwidthGBs)
      << "  // kept: bench/calibrate-net.sh measures it\n";
    o << "  m.tree[" << kProto[p]
      << "] = " << format("{%.4g, %.4g};", m.tree[p].latency, m.tree[p].bandwidth) << "  // "
      << source("tree[" + proto + "]") << "\n";
    auto oneShot = [&](const char* field, const tune::OneShotCost& c) {
      o << "  m." << field << "[" << kProto[p]
        << "] = " << format("{%.4g, %.4g, %.4g};", c.baseUs, c.perPeerUs, c.readGBs) << "  // "
        << source(std::string(field) + "[" + proto + "]") << "\n";
    };
    oneShot("oneShot", m.oneShot[p]);
    oneShot("oneShotShared", m.oneShotShared[p]);
  }
  // Point-to-point runs Simple only: one hop each, no protocol index. An
  // unset one stays unset, so that the ring's hop keeps standing in for it.
  auto p2pLink = [&](const char* field, const tune::LinkCost& l) {
    if (!(l.bandwidthGBs > 0)) {
      o << "  // m." << field << " unset: the ring's Simple hop stands in; " << source(field)
        << "\n";
      return;
    }
    o << "  m." << field << " = " << format("{%.4g, %.4g};", l.latencyUs, l.bandwidthGBs) << "  // "
      << source(field) << "\n";
  };
  p2pLink("p2p", m.p2p);
  p2pLink("p2pShared", m.p2pShared);
  o << "  // clang-format on\n";
  o << "  return m;\n";
  return o.str();
}

}  // namespace braid::calibrate
