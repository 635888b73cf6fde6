// The flight recorder (see flight_recorder.h): the ring of calls, and the dump.
#include "flight/flight_recorder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>

#include "kernels/engine/sync.h"

namespace braid::flight {
namespace {

namespace engine = kernels::engine;

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A call's start and end, read from the kernel's tick clock (the monotonic clock as of the
// last tick, the same clock as nowNs's): a few ns where a precise read costs tens, paid twice
// by every call. A dump measures a hang in seconds; a done call's time reads in ticks (1 to
// 10 ms), which is as much as a record of the last calls needs.
int64_t tickNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string ms(int64_t ns) {
  char text[32];
  snprintf(text, sizeof(text), "%.3f", static_cast<double>(ns) / 1e6);
  return text;
}

std::string utcNow() {
  const time_t t = time(nullptr);
  tm parts{};
  gmtime_r(&t, &parts);
  char text[32];
  strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

/// A wait record's words, read once each (the waiting thread may change them meanwhile).
struct WaitSnapshot {
  engine::WaitKind kind;
  int peer;
  uint32_t call;
  uint32_t instr;
  uint64_t sinceNs;
  uint64_t launch;
  uint64_t done;
};

WaitSnapshot snapshot(const engine::WaitRecord& r) {
  WaitSnapshot s;
  s.kind = static_cast<engine::WaitKind>(__atomic_load_n(&r.kind, __ATOMIC_ACQUIRE));
  s.peer = __atomic_load_n(&r.peer, __ATOMIC_RELAXED);
  s.call = __atomic_load_n(&r.call, __ATOMIC_RELAXED);
  s.instr = __atomic_load_n(&r.instr, __ATOMIC_RELAXED);
  s.sinceNs = __atomic_load_n(&r.sinceNs, __ATOMIC_RELAXED);
  s.launch = __atomic_load_n(&r.launch, __ATOMIC_RELAXED);
  s.done = __atomic_load_n(&r.done, __ATOMIC_RELAXED);
  return s;
}

/// Host channels noted: the executor runs at most this many (BRAID_NCHANNELS <= 64).
constexpr size_t kHostChannels = 64;

}  // namespace

const char* callStateName(CallState state) {
  switch (state) {
    case CallState::kRunning:
      return "running";
    case CallState::kEnqueued:
      return "enqueued";
    case CallState::kDone:
      return "done";
    case CallState::kFailed:
      return "failed";
  }
  return "unknown";
}

FlightRecorder::FlightRecorder(Identity identity, size_t capacity, std::string dumpDir)
    : identity_(std::move(identity)),
      capacity_(capacity > 0 ? capacity : 1),
      dumpDir_(std::move(dumpDir)),
      hostWaits_(kHostChannels) {
  calls_.reserve(capacity_);
}

std::string describe(const CollectiveFields& call) {
  std::string out = call.collective != nullptr ? call.collective : "call";
  if (call.variable) out += "V";
  out += " of " + std::to_string(call.count) + " x " + call.type;
  if (call.userOp >= 0) {
    out += " user operator " + std::to_string(call.userOp);
  } else if (call.op[0] != '\0') {
    out += std::string(" ") + call.op;
  }
  if (call.root >= 0) out += ", root " + std::to_string(call.root);
  return out;
}

std::string describe(const PlanFields& plan) {
  if (plan.algorithm == nullptr) return std::string();
  return std::string(plan.algorithm) + "/" + plan.protocol + ", " + std::to_string(plan.channels) +
         (plan.channels == 1 ? " channel" : " channels");
}

// Each record is reset in place rather than replaced, so its strings and vector keep their
// memory from one lap of the ring to the next.
CallRecord& FlightRecorder::open(int64_t startNs) {
  ++seq_;
  if (calls_.size() < capacity_) calls_.emplace_back();
  CallRecord& r = calls_[next_];
  // Not `% capacity_`: a division, on the path of every call.
  next_ = next_ + 1 == capacity_ ? 0 : next_ + 1;
  r.seq = seq_;
  r.collective = CollectiveFields();
  r.what.clear();
  r.plan = PlanFields();
  r.how.clear();
  r.state = CallState::kRunning;
  r.startNs = startNs;
  r.endNs = 0;
  r.error.clear();
  r.launch = 0;
  r.callInLaunch = 0;
  r.channelInstrs.clear();
  r.firstBlock = 0;
  return r;
}

uint64_t FlightRecorder::begin(const std::string& what, const std::string& how,
                               const std::vector<uint32_t>& channelInstrs) {
  const int64_t start = tickNowNs();
  std::lock_guard<SpinMutex> lock(mutex_);
  CallRecord& r = open(start);
  r.what = what;
  r.how = how;
  r.channelInstrs = channelInstrs;
  return r.seq;
}

uint64_t FlightRecorder::begin(const CollectiveFields& call) {
  return begin(call, PlanFields(), {});
}

uint64_t FlightRecorder::begin(const CollectiveFields& call, const PlanFields& plan,
                               const std::vector<uint32_t>& channelInstrs) {
  const int64_t start = tickNowNs();
  std::lock_guard<SpinMutex> lock(mutex_);
  CallRecord& r = open(start);
  r.collective = call;
  r.plan = plan;
  if (!channelInstrs.empty()) r.channelInstrs = channelInstrs;
  return r.seq;
}

// Call s went into slot (s - 1) % capacity_ (numbers and slots advance together), where it
// stays until capacity_ later calls have passed.
CallRecord* FlightRecorder::find(uint64_t seq) {
  if (seq == 0 || seq > seq_ || seq_ - seq >= capacity_) return nullptr;
  // The latest call (the one nearly always asked for) went just before next_.
  CallRecord& r =
      calls_[seq == seq_ ? (next_ == 0 ? capacity_ : next_) - 1 : (seq - 1) % capacity_];
  return r.seq == seq ? &r : nullptr;
}

void FlightRecorder::planned(uint64_t seq, const PlanFields& plan,
                             const std::vector<uint32_t>& channelInstrs) {
  std::lock_guard<SpinMutex> lock(mutex_);
  if (CallRecord* r = find(seq)) {
    r->plan = plan;
    r->how.clear();
    r->channelInstrs = channelInstrs;
  }
}

void FlightRecorder::enqueued(uint64_t seq, uint64_t launch, uint32_t index, uint32_t firstBlock) {
  std::lock_guard<SpinMutex> lock(mutex_);
  if (CallRecord* r = find(seq)) {
    r->state = CallState::kEnqueued;
    r->launch = launch;
    r->callInLaunch = index;
    r->firstBlock = firstBlock;
  }
}

void FlightRecorder::end(uint64_t seq, const Status& status) {
  std::lock_guard<SpinMutex> lock(mutex_);
  CallRecord* r = find(seq);
  if (r == nullptr) return;
  if (!status.ok()) {
    r->state = CallState::kFailed;
    r->endNs = tickNowNs();
    r->error.assign(status.message(), 0, 300);
  } else if (r->state == CallState::kRunning) {
    r->state = CallState::kDone;
    r->endNs = tickNowNs();
  }
}

void FlightRecorder::renderWaits(std::string& out, const CallRecord& call, int64_t now) const {
  const size_t channels = call.channelInstrs.size();
  for (size_t c = 0; c < channels; ++c) {
    WaitSnapshot w{};
    if (call.launch == 0) {
      if (c >= hostWaits_.size()) break;
      w = snapshot(hostWaits_[c]);
    } else {
      const size_t block = call.firstBlock + c;
      if (gpuWaits_ == nullptr || block >= engine::kMaxWaitRecords) break;
      w = snapshot(gpuWaits_[block]);
      if (w.launch != call.launch || w.call != call.callInLaunch) continue;
    }
    if (w.kind == engine::WaitKind::kNone) continue;
    const int64_t waited = now - static_cast<int64_t>(w.sinceNs);
    out += "wait: call " + std::to_string(call.seq) + " channel " + std::to_string(c) + " " +
           (w.kind == engine::WaitKind::kRecv ? "recv" : "send") + " rank " +
           std::to_string(w.peer) + " instruction " + std::to_string(w.instr + 1) + " of " +
           std::to_string(call.channelInstrs[c]) + " for " + ms(waited > 0 ? waited : 0) + " ms\n";
  }
}

std::string FlightRecorder::render(const std::string& reason,
                                   const std::vector<std::string>& lost) const {
  std::lock_guard<SpinMutex> lock(mutex_);
  const int64_t now = nowNs();
  char comm[32];
  snprintf(comm, sizeof(comm), "0x%016" PRIx64, identity_.comm);
  std::string out = "braid flight recorder\n";
  out += std::string("comm: ") + comm + "\n";
  out += "rank: " + std::to_string(identity_.rank) + "\n";
  out += "nranks: " + std::to_string(identity_.nranks) + "\n";
  if (!identity_.name.empty()) out += "name: " + identity_.name + "\n";
  out += "pid: " + std::to_string(identity_.pid) + "\n";
  out += "host: " + identity_.host + "\n";
  out += std::string("memory: ") + (identity_.gpu ? "gpu" : "host") + "\n";
  out += "reason: " + reason + "\n";
  out += "time: " + utcNow() + "\n";
  for (const std::string& l : lost) out += "lost: " + l + "\n";
  // Oldest first: the ring's next slot holds the oldest once it is full.
  const size_t n = calls_.size();
  const size_t first = n < capacity_ ? 0 : next_;
  for (size_t i = 0; i < n; ++i) {
    const CallRecord& r = calls_[(first + i) % n];
    CallState state = r.state;
    // A GPU call is done once every block of its launch has moved past it.
    if (state == CallState::kEnqueued && gpuWaits_ != nullptr && !r.channelInstrs.empty()) {
      bool past = true;
      for (size_t c = 0; c < r.channelInstrs.size(); ++c) {
        const size_t block = r.firstBlock + c;
        if (block >= engine::kMaxWaitRecords ||
            __atomic_load_n(&gpuWaits_[block].done, __ATOMIC_RELAXED) < r.launch) {
          past = false;
        }
      }
      if (past) state = CallState::kDone;
    }
    const int64_t took = (r.endNs != 0 ? r.endNs : now) - r.startNs;
    out += "call: " + std::to_string(r.seq) + " " + callStateName(state) + " " +
           (r.collective.collective != nullptr ? describe(r.collective) : r.what) + " | " +
           (r.plan.algorithm != nullptr ? describe(r.plan) : r.how) + " | " + ms(took) + " ms\n";
    if (state == CallState::kFailed)
      out += "error: call " + std::to_string(r.seq) + " " + r.error + "\n";
    if (state == CallState::kRunning || state == CallState::kEnqueued) renderWaits(out, r, now);
  }
  out += "end\n";
  return out;
}

Result<std::string> FlightRecorder::dump(const std::string& reason,
                                         const std::vector<std::string>& lost) const {
  if (dumpDir_.empty()) return std::string();
  if (mkdir(dumpDir_.c_str(), 0755) != 0 && errno != EEXIST) {
    return systemError("BRAID_FLIGHT_RECORDER: cannot make " + dumpDir_ + ": " + strerror(errno));
  }
  char name[96];
  snprintf(name, sizeof(name), "/braid-flight-%016" PRIx64 "-rank%d.txt", identity_.comm,
           identity_.rank);
  const std::string path = dumpDir_ + name;
  // Written aside and renamed, so that a reader never sees half a dump.
  const std::string partial = path + ".partial." + std::to_string(getpid());
  {
    std::ofstream file(partial, std::ios::trunc);
    if (!file) return systemError("BRAID_FLIGHT_RECORDER: cannot write " + partial);
    file << render(reason, lost);
    if (!file) return systemError("BRAID_FLIGHT_RECORDER: writing " + partial + " failed");
  }
  if (rename(partial.c_str(), path.c_str()) != 0) {
    return systemError("BRAID_FLIGHT_RECORDER: cannot rename to " + path + ": " + strerror(errno));
  }
  return path;
}

}  // namespace braid::flight
