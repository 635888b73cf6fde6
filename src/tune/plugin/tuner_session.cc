#include "tune/plugin/tuner_session.h"

#include <utility>

#include "base/log.h"
#include "tune/plugin/cost_table.h"

namespace braid::tune {

std::unique_ptr<TunerSession> TunerSession::open(std::shared_ptr<void> holder, TunerPlugin& plugin,
                                                 TunerInit init) {
  Result<void*> context = plugin.init(init);
  if (!context.ok()) {
    BRAID_INFO("TUNER/Plugin: %s; choosing algorithms without it",
               context.status().message().c_str());
    return nullptr;
  }
  BRAID_INFO("TUNER/Plugin: %s initialized for %zu ranks on %zu nodes", plugin.describe().c_str(),
             init.nranks, init.nnodes);
  return std::unique_ptr<TunerSession>(
      new TunerSession(std::move(holder), plugin, context.value()));
}

TunerSession::~TunerSession() {
  Status s = plugin_.finalize(context_);
  if (!s.ok()) BRAID_INFO("TUNER/Plugin: %s", s.message().c_str());
}

Choice TunerSession::decide(Collective collective, size_t bytes, const CostTable& offered,
                            const Choice& ours, int maxChannels) {
  CostTable answered = offered;
  int nChannels = 0;
  // braid runs one collective per call: no aggregation, no registered-buffer algorithms.
  Status s = plugin_.getCollInfo(context_, ncclFunc(collective), bytes, /*numPipeOps=*/1, answered,
                                 /*regBuff=*/false, &nChannels);
  Choice kept = ours;
  kept.pluginAsked = true;
  if (!s.ok()) {
    if (!saidFailure_) BRAID_INFO("TUNER/Plugin: %s; braid's choice stands", s.message().c_str());
    saidFailure_ = true;
    return kept;
  }
  std::optional<Choice> tuned = tunedChoice(ours, offered, answered, nChannels, maxChannels);
  if (tuned) return *tuned;
  if (!saidEmpty_) {
    BRAID_INFO(
        "TUNER/Plugin: %s left no algorithm and protocol braid runs for %s of %zu B; "
        "braid's choice stands",
        plugin_.describe().c_str(), collectiveName(collective), bytes);
  }
  saidEmpty_ = true;
  return kept;
}

Result<size_t> TunerSession::chunkBytes(Collective collective, size_t bytes, const Choice& choice,
                                        int nchannels, size_t ours) {
  const int algorithm = ncclAlgorithmIndex(choice.algorithm);
  if (!plugin_.offersChunkSize() || algorithm < 0) return ours;
  size_t chunk = ours;
  BRAID_TRY(plugin_.getChunkSize(context_, ncclFunc(collective), bytes, algorithm,
                                 ncclProtocolIndex(choice.protocol), nchannels, &chunk));
  return chunk;
}

}  // namespace braid::tune
