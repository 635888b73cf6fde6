// Recorder (recorder.h): the communicator's side of the flight recorder (flight/
// flight_recorder.h) and of BRAID_TRACE: making them, naming each call as it begins and what
// runs it once that is chosen, and dumping on failures and losses.
#include "comm/recorder.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>

#include "base/log.h"
#include "flight/dump_on_signal.h"

namespace braid::comm {

Recorder::Recorder(const Config& config, const Members& members, const Health& health)
    : config_(config), members_(members), health_(health) {
  if (!config.tracePath.empty()) {
    trace_ = std::make_unique<trace::Recorder>(config.tracePath, members.rank);
  }
}

void Recorder::attachGpuWaits(const kernels::engine::WaitRecord* waits) const {
  if (flight_) flight_->attachGpuWaits(waits);
}

void Recorder::noteEnqueued(uint64_t seq, uint64_t launch, uint32_t index,
                            uint32_t firstBlock) const {
  flight_->enqueued(seq, launch, index, firstBlock);
}

void Recorder::forgetFlight() {
  if (flight_) flight::forget(flight_.get());
}

Status Recorder::startFlight() {
  flight::Identity who;
  who.comm = members_.bootstrap()->magic();
  who.rank = members_.rank;
  who.nranks = members_.nranks;
  who.pid = getpid();
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) who.host = host;
  who.gpu = members_.cudaDevice >= 0;
  who.name = members_.name;
  flight_ = std::make_unique<flight::FlightRecorder>(
      who, static_cast<size_t>(config_.flightRecorderEntries), config_.flightRecorderDir);
  if (!config_.flightRecorderDir.empty()) {
    const Health* health = &health_;
    flight::dumpOnSignal(flight_.get(), [health] { return health->lossWords(); });
  }
  return Status::success();
}

void Recorder::startProfiler() {
  profiler::CommIdentity who;
  who.commHash = members_.bootstrap()->magic();
  who.commName = members_.name.c_str();
  who.nNodes = members_.hostCount();
  who.nranks = members_.nranks;
  who.rank = members_.rank;
  profiler_ = profiler::CommProfiler::open(config_.profilerPlugin, who);
}

void Recorder::begin(const std::string& what, const std::string& how,
                     const std::vector<uint32_t>& channelInstrs) {
  held_ = false;
  flightSeq_ = flight_->begin(what, how, channelInstrs);
}

void Recorder::begin(const CollectiveCall& call) {
  heldFields_ = collectiveFields(call);
  held_ = true;
}

void Recorder::flush() {
  if (!held_) return;
  held_ = false;
  flightSeq_ = flight_->begin(heldFields_);
}

void Recorder::end(const Status& s) {
  flush();
  flight_->end(flightSeq_, s);
}

flight::CollectiveFields collectiveFields(const CollectiveCall& call) {
  flight::CollectiveFields f;
  f.collective = collectiveName(call.collective);
  f.variable = call.blockCounts != nullptr;
  f.count = call.count;
  f.type = dataTypeName(call.type);
  if (reduces(call.collective)) {
    const int op = static_cast<int>(call.op);
    if (op >= kFirstUserOp) {
      f.userOp = op;
    } else {
      f.op = redOpName(call.op);
    }
  }
  if (rooted(call.collective)) f.root = call.root;
  return f;
}

std::string describeCall(const CollectiveCall& call) {
  return flight::describe(collectiveFields(call));
}

void Recorder::plan(const tune::Choice& choice, const exec::Program* program, const char* ran) {
  instrs_.clear();
  if (program != nullptr) {
    for (const exec::ChannelProgram& ch : program->channels) {
      instrs_.push_back(static_cast<uint32_t>(ch.instrs.size()));
    }
  } else {
    // The boards (one-shot, zero-copy) wait for one peer at a time, noted in channel 0's record.
    instrs_.push_back(1);
  }
  flight::PlanFields f;
  f.algorithm = ran != nullptr ? ran : algo::algorithmName(choice.algorithm);
  f.protocol = algo::protocolName(choice.protocol);
  f.channels = static_cast<uint32_t>(instrs_.size());
  if (held_) {
    held_ = false;
    flightSeq_ = flight_->begin(heldFields_, f, instrs_);
  } else {
    flight_->planned(flightSeq_, f, instrs_);
  }
}

Status Recorder::Scope::close(Status s) {
  closed_ = true;
  recorder_.end(s);
  if (!s.ok()) recorder_.noteFailure(s, call_ != nullptr ? describeCall(*call_) : failureWords_);
  return s;
}

void Recorder::dumpPlan(const CollectiveCall& call, const tune::Choice& choice,
                        const algo::Schedule* schedule, const char* board, const char* why) const {
  if (!config_.dumpSchedule) return;
  if (schedule != nullptr) {
    fprintf(stderr, "[rank %d] %s %s %s", members_.rank, algo::algorithmName(choice.algorithm),
            algo::protocolName(choice.protocol),
            algo::formatSchedule(*schedule, call.type).c_str());
  } else {
    fprintf(stderr, "[rank %d] %s of %zu x %s: %s, no schedule (%s)\n", members_.rank,
            collectiveName(call.collective), call.count, dataTypeName(call.type), board, why);
  }
}

void Recorder::noteFailure(const Status& s, const std::string& what) const {
  const bool timedOut = s.message().find("timed out") != std::string::npos;
  // A timeout is where a person most needs the story: it goes to the log even without a dump
  // directory.
  if (timedOut) {
    BRAID_WARN("%s timed out; the flight recorder of rank %d:\n%s", what.c_str(), members_.rank,
               flight_->render("timeout", health_.lossWords()).c_str());
  }
  if (config_.flightRecorderDir.empty()) return;
  Result<std::string> path =
      flight_->dump(what + " failed: " + s.message().substr(0, 200), health_.lossWords());
  if (path.ok()) {
    BRAID_INFO("flight recorder: dumped to %s", path.value().c_str());
  } else {
    BRAID_WARN("flight recorder: %s", path.status().message().c_str());
  }
}

void Recorder::noteLoss(const watch::Loss& loss) {
  if (!flight_ || config_.flightRecorderDir.empty()) return;
  Result<std::string> path =
      flight_->dump("lost rank " + std::to_string(loss.rank), health_.lossWords());
  if (!path.ok()) BRAID_WARN("flight recorder: %s", path.status().message().c_str());
}

void Recorder::traceCall(const CollectiveCall& call, const tune::Choice& choice, int nchannels,
                         double startUs, const char* ran) const {
  if (!trace_) return;
  trace::Event e;
  e.name = collectiveName(call.collective);
  e.startUs = startUs;
  e.durationUs = trace_->nowUs() - startUs;
  e.args = std::string("\"algorithm\":\"") +
           (ran != nullptr ? ran : algo::algorithmName(choice.algorithm)) + "\",\"protocol\":\"" +
           algo::protocolName(choice.protocol) + "\",\"channels\":" + std::to_string(nchannels) +
           ",\"count\":" + std::to_string(call.count) + ",\"datatype\":\"" +
           dataTypeName(call.type) +
           "\",\"bytes\":" + std::to_string(call.count * dataTypeSize(call.type)) +
           ",\"predicted_us\":" + std::to_string(choice.predictedUs);
  trace_->add(std::move(e));
}

void Recorder::writeTrace() {
  if (!trace_) return;
  Status s = trace_->write();
  if (s.ok()) {
    BRAID_INFO("trace written to %s", trace_->path().c_str());
  } else {
    BRAID_WARN("%s", s.message().c_str());
  }
}

}  // namespace braid::comm
