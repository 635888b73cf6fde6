// The communicator's side of the flight recorder (flight/flight_recorder.h): making it, naming
// each call as it begins and what runs it once that is chosen, and dumping on failures.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "base/log.h"
#include "comm_impl.h"
#include "flight/dump_on_signal.h"

namespace braid {

Status Comm::Impl::startFlightRecorder() {
  flight::Identity who;
  who.comm = bootstrap->magic();
  who.rank = rank;
  who.nranks = nranks;
  who.pid = getpid();
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) who.host = host;
  who.gpu = cudaDevice >= 0;
  flight = std::make_unique<flight::FlightRecorder>(
      who, static_cast<size_t>(config.flightRecorderEntries), config.flightRecorderDir);
  if (!config.flightRecorderDir.empty()) {
    flight::dumpOnSignal(flight.get(), [this] { return lossWords(); });
  }
  return Status::success();
}

std::vector<std::string> Comm::Impl::lossWords() const {
  std::vector<std::string> words;
  if (!watch) return words;
  for (const watch::Loss& loss : watch->losses()) words.push_back(lossStatus(loss).message());
  return words;
}

std::string Comm::Impl::describeCall(const CollCall& call) const {
  std::string out = collectiveName(call.collective);
  if (call.blockCounts != nullptr) out += "V";
  out += " of " + std::to_string(call.count) + " x " + dataTypeName(call.type);
  if (reduces(call.collective)) {
    const int op = static_cast<int>(call.op);
    out += op >= kFirstUserOp ? " user operator " + std::to_string(op)
                              : std::string(" ") + redOpName(call.op);
  }
  if (call.collective == Collective::kBroadcast || call.collective == Collective::kReduce) {
    out += ", root " + std::to_string(call.root);
  }
  return out;
}

void Comm::Impl::planFlight(const tune::Choice& choice, const exec::Program* program) {
  std::vector<uint32_t> instrs;
  if (program != nullptr) {
    for (const exec::ChannelProgram& ch : program->channels) {
      instrs.push_back(static_cast<uint32_t>(ch.instrs.size()));
    }
  }
  const size_t channels = instrs.empty() ? 1 : instrs.size();
  flight->planned(flightSeq,
                  std::string(algo::algorithmName(choice.algorithm)) + "/" +
                      algo::protocolName(choice.protocol) + ", " + std::to_string(channels) +
                      (channels == 1 ? " channel" : " channels"),
                  std::move(instrs));
}

void Comm::Impl::noteFailure(const Status& s, const std::string& what) const {
  const bool timedOut = s.message().find("timed out") != std::string::npos;
  // A timeout is where a person most needs the story: it goes to the log even without a dump
  // directory.
  if (timedOut) {
    BRAID_WARN("%s timed out; the flight recorder of rank %d:\n%s", what.c_str(), rank,
               flight->render("timeout", lossWords()).c_str());
  }
  if (config.flightRecorderDir.empty()) return;
  Result<std::string> path =
      flight->dump(what + " failed: " + s.message().substr(0, 200), lossWords());
  if (path.ok()) {
    BRAID_INFO("flight recorder: dumped to %s", path.value().c_str());
  } else {
    BRAID_WARN("flight recorder: %s", path.status().message().c_str());
  }
}

}  // namespace braid
