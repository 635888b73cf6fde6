// Recorder: what a communicator writes down about its calls.
//
// It owns the flight recorder (flight/flight_recorder.h: the last calls, what ran them and what
// each channel waits for, dumped on a failure, a lost peer or SIGUSR1) and BRAID_TRACE's
// recorder (base/trace.h: one event per call, written when the communicator is destroyed).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algo/schedule.h"
#include "base/trace.h"
#include "braid/status.h"
#include "comm/call.h"
#include "comm/health.h"
#include "comm/members.h"
#include "config.h"
#include "exec/program.h"
#include "flight/flight_recorder.h"
#include "profiler/comm_profiler.h"
#include "tune/select.h"
#include "watch/peer_watch.h"

namespace braid::comm {

class Recorder {
 public:
  class Scope;

  /// With BRAID_TRACE, the trace of this rank starts now.
  Recorder(const Config& config, const Members& members, const Health& health);
  ~Recorder() { forgetFlight(); }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  /// Where the host's waits are noted, one record per channel, for the flight recorder's dumps
  /// (after startFlight).
  kernels::engine::WaitRecord* hostWaits() const { return flight_->hostWaits(); }
  /// Where a GPU communicator's blocks note their waits, for the same dumps.
  void attachGpuWaits(const kernels::engine::WaitRecord* waits) const;
  /// The call recorded as `seq` went on a GPU stream in launch `launch` as call `index`, from
  /// block `firstBlock`.
  void noteEnqueued(uint64_t seq, uint64_t launch, uint32_t index, uint32_t firstBlock) const;
  /// Whether a GPU fault is to be dumped now: true the first time only (asyncError dumps the
  /// first it sees).
  bool firstFaultDump() const { return !faultDumped_.exchange(true); }
  /// BRAID_TRACE's events, where host steps note their time; null without it.
  trace::Recorder* trace() const { return trace_.get(); }

  /// Makes the flight recorder (after the bootstrap, whose magic names the communicator).
  Status startFlight();
  /// Opens the record of a call (`what`), which becomes the one running.
  void begin(const std::string& what, const std::string& how = "",
             const std::vector<uint32_t>& channelInstrs = {});
  /// Opens the record of a collective, kept as its fields: worded only when a dump asks, so
  /// that the call's fast path builds no string. The record is written with the call's plan
  /// (one lock of the flight recorder instead of two), or by flush() where the call may wait
  /// for something before it has a plan.
  void begin(const CollectiveCall& call);
  /// Writes the record begin() holds back, if any: before anything that may wait.
  void flush();
  /// The record of the call now running on this communicator (written now if held back).
  uint64_t flightSeq() {
    flush();
    return flightSeq_;
  }
  /// Closes the running call's record with its result.
  void end(const Status& s);
  /// What runs the call now recorded: its choice and, for schedules, its channels' programs.
  /// `ran`, when given, names what ran instead of the choice's algorithm ("zero-copy").
  void plan(const tune::Choice& choice, const exec::Program* program, const char* ran = nullptr);
  /// A call (`what`) failed: its story to the log on a timeout, and to the dump directory.
  void noteFailure(const Status& s, const std::string& what) const;
  /// A peer was lost: what every channel waited for when the word came (on the watcher's
  /// thread).
  void noteLoss(const watch::Loss& loss);
  /// With BRAID_TRACE: one event on the collectives track saying what `call` ran (on a GPU
  /// communicator the event spans the enqueue, not the kernel).
  void traceCall(const CollectiveCall& call, const tune::Choice& choice, int nchannels,
                 double startUs, const char* ran = nullptr) const;
  /// BRAID_DUMP_SCHEDULE: what runs `call`, to stderr: `schedule`, which a way has just made
  /// for `choice`, or else the board that runs it without one (`board`, and `why` it needs
  /// none). Every plan dumped is dumped here.
  void dumpPlan(const CollectiveCall& call, const tune::Choice& choice,
                const algo::Schedule* schedule, const char* board = nullptr,
                const char* why = nullptr) const;
  /// Loads the profiler plugin (NCCL_PROFILER_PLUGIN, profiler/profiler_loader.h) and calls its
  /// init for this communicator: once the peers are known (the plugin is told the nodes).
  void startProfiler();
  /// The profiler plugin's side of this communicator; null without one, the one branch each
  /// call pays for it.
  profiler::CommProfiler* profiler() const { return profiler_.get(); }
  /// Where network FIFO ends report their proxies' events; null unless the plugin asked.
  std::shared_ptr<profile::ProxyEventSink> proxyEvents() const {
    return profiler_ ? profiler_->proxySink() : nullptr;
  }
  /// Now on the trace's clock; 0 without a trace.
  double traceNowUs() const { return trace_ ? trace_->nowUs() : 0; }
  /// SIGUSR1 no longer dumps this communicator's flight recorder.
  void forgetFlight();
  /// Writes BRAID_TRACE's file, saying where at INFO.
  void writeTrace();

 private:
  const Config& config_;
  const Members& members_;
  const Health& health_;
  std::unique_ptr<flight::FlightRecorder> flight_;
  mutable std::atomic<bool> faultDumped_{false};
  std::unique_ptr<trace::Recorder> trace_;
  /// Shared with the proxies that report to it: the plugin's finalize comes with the last.
  std::shared_ptr<profiler::CommProfiler> profiler_;
  /// plan's channel instruction counts, kept so that repeated calls allocate nothing.
  std::vector<uint32_t> instrs_;
  uint64_t flightSeq_ = 0;
  bool held_ = false;  ///< begin's record is not written yet
  flight::CollectiveFields heldFields_;
};

/// One call's record, from its beginning to its end: every call's record goes through one.
/// It opens the record (a collective's held back until something may wait, Recorder::begin),
/// takes what runs the call (plan), and close() ends it with the call's result, noting a
/// failure (Recorder::noteFailure). A scope left without close() ends its record as failed.
class Recorder::Scope {
 public:
  /// A collective call.
  Scope(Recorder& recorder, const CollectiveCall& call) : recorder_(recorder), call_(&call) {
    recorder_.begin(call);
  }
  /// Another call (`what`), run as `how`, with its channels' instruction counts.
  Scope(Recorder& recorder, const std::string& what, const char* failureWords,
        const std::string& how, const std::vector<uint32_t>& channelInstrs)
      : recorder_(recorder), failureWords_(failureWords) {
    recorder_.begin(what, how, channelInstrs);
  }
  ~Scope() {
    if (!closed_) (void)close(internalError("a call's record was left open"));
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  /// What runs the call (Recorder::plan).
  void plan(const tune::Choice& choice, const exec::Program* program, const char* ran = nullptr) {
    recorder_.plan(choice, program, ran);
  }
  /// Writes the held-back record: before anything that may wait for the peers.
  void flush() { recorder_.flush(); }
  /// Ends the record with the call's result `s`, which it returns.
  Status close(Status s);

 private:
  Recorder& recorder_;
  const CollectiveCall* call_ = nullptr;  ///< a collective's: worded only for a failure
  const char* failureWords_ = nullptr;    ///< other calls: what a failure calls them
  bool closed_ = false;
};

/// A collective's fields as the flight recorder keeps them (describeCall's words).
flight::CollectiveFields collectiveFields(const CollectiveCall& call);

}  // namespace braid::comm
