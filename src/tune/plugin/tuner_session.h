// TunerSession: one communicator's use of the process's tuner plugin (tuner_loader.h): the
// context its init made, asked about each call, finalized when the communicator goes.
//
// Per call the selector hands it the table its model filled (cost_table.h) and its own choice;
// the session copies the table, lets the plugin rewrite it and set a channel count, and reads
// the choice back (tunedChoice). A plugin whose getCollInfo fails, or that leaves nothing braid
// can run, leaves braid's choice, said once at INFO: NCCL's header promises that fall back.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "braid/types.h"
#include "tune/plugin/cost_table.h"
#include "tune/plugin/tuner_plugin.h"
#include "tune/select.h"

namespace braid::tune {

class TunerSession {
 public:
  /// A context of `plugin` (which `holder` keeps loaded) for a communicator `init` describes;
  /// null, said at INFO, when the plugin's init fails: the communicator then chooses alone.
  static std::unique_ptr<TunerSession> open(std::shared_ptr<void> holder, TunerPlugin& plugin,
                                            TunerInit init);
  ~TunerSession();
  TunerSession(const TunerSession&) = delete;
  TunerSession& operator=(const TunerSession&) = delete;

  /// The choice for a call of `collective` on `bytes` (nccl-tests' size, as NCCL's nBytes):
  /// `ours` as the plugin's answer to `offered` changes it, channels within [1, maxChannels].
  Choice decide(Collective collective, size_t bytes, const CostTable& offered, const Choice& ours,
                int maxChannels);

  /// The bytes of one chunk of a call braid runs as `choice` on `nchannels` channels, where its
  /// own rule gives `ours`: the plugin's getChunkSize may change them (v6, where offered), as
  /// NCCL asks it once the algorithm is chosen. The caller clamps the answer to what its FIFOs
  /// hold. Errors: the plugin's getChunkSize failed (NCCL fails the call then too).
  Result<size_t> chunkBytes(Collective collective, size_t bytes, const Choice& choice,
                            int nchannels, size_t ours);

  const TunerPlugin& plugin() const { return plugin_; }

 private:
  TunerSession(std::shared_ptr<void> holder, TunerPlugin& plugin, void* context)
      : holder_(std::move(holder)), plugin_(plugin), context_(context) {}

  std::shared_ptr<void> holder_;  // the library, loaded while this session lives
  TunerPlugin& plugin_;
  void* context_;
  bool saidFailure_ = false;  // a failed getCollInfo is said once
  bool saidEmpty_ = false;    // a table left with nothing braid runs is said once
};

}  // namespace braid::tune
