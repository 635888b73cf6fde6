#include "event_sim.h"

#include <algorithm>
#include <queue>
#include <string>
#include <utility>

#include "agent_cursor.h"
#include "fifo_counters.h"
#include "ready_set.h"

namespace braid::sim {
namespace {

constexpr int kSlots = kFifoSlots;

// A connection's link: the two ports a slice holds, and what it costs.
struct Link {
  int portOut = 0;
  int portIn = 0;
  double usPerByte = 0;
  double latencyUs = 0;
};

// The times a connection's FIFO knows: when each slot's slice arrives, and
// when the sender learns that each slot is free again.
struct TimedFifo : FifoCounters {
  Link link;  // here rather than apart: a slice touches both
  double arrivalUs[kSlots] = {};
  double freeAtUs[kSlots] = {};
};

// What an agent needs beside its cursor.
struct TimedAgent {
  double freeUs = 0;  // when its last slice ended
  bool alone = true;  // no other agent sends through its ports
};

// What the trace keeps of each slot's slice, to draw messages.
struct SlotOrigin {
  uint64_t step = 0;
  double sentUs = 0;
};

class Simulator {
 public:
  Simulator(const ScheduleSet& set, const Machine& machine, const TimingOptions& options)
      : set_(set), machine_(machine), options_(options) {}

  Result<TimingResult> run() {
    setUpLinks();
    findPrivateAgents();
    agents_.assign(set_.agents.size(), AgentCursor{});
    for (size_t a = 0; a < agents_.size(); ++a) {
      agents_[a].sliceElems = set_.sliceElems[set_.rankOf(static_cast<int>(a))];
      if (agents_[a].sliceElems == 0) {
        return invalidArgument("rank " + std::to_string(set_.rankOf(static_cast<int>(a))) +
                               ": the schedule's sliceElems is 0");
      }
    }
    if (options_.trace) {
      origins_.assign(fifos_.size() * kSlots, SlotOrigin{});
      stepStartUs_.assign(agents_.size(), 0.0);
      messageStart_.assign(agents_.size(), SlotOrigin{});
    }
    ready_.resize(agents_.size());
    for (size_t a = 0; a < agents_.size(); ++a) ready_.add(static_cast<int>(a));
    for (;;) {
      while (!ready_.empty()) {
        for (int a = ready_.takeFrom(0); a >= 0; a = ready_.takeFrom(a)) BRAID_TRY(advance(a));
      }
      if (queue_.empty()) break;
      const auto [t, agent] = queue_.top();
      queue_.pop();
      ++result_.queued;
      BRAID_TRY(moveSlice(agent, t));
      BRAID_TRY(advance(agent));
    }
    for (size_t a = 0; a < agents_.size(); ++a) {
      if (!agents_[a].finished) {
        const int agent = static_cast<int>(a);
        const auto& runs = set_.agents[a];
        return internalError(
            "deadlock: " +
            set_.describeStep(agent, agents_[a].stepIndex(runs), agents_[a].step(runs)) +
            " can never move (braid-sim's symbolic check says more)");
      }
      result_.timeUs = std::max(result_.timeUs, timed_[a].freeUs);
    }
    return std::move(result_);
  }

 private:
  int nvlinkPort(int rank, bool in) const { return 2 * rank + (in ? 1 : 0); }
  int nicPort(int rank, int channel, bool in) const {
    const int nic = machine_.nodeOf(rank) * machine_.nicsPerNode + machine_.nicOf(rank, channel);
    return 2 * set_.nranks + 2 * nic + (in ? 1 : 0);
  }

  void setUpLinks() {
    fifos_ = std::vector<TimedFifo>(set_.connections.size());
    for (size_t c = 0; c < set_.connections.size(); ++c) {
      const Connection& conn = set_.connections[c];
      const HopCost cost = hopCost(machine_, conn.sender, conn.receiver, options_.protocol);
      Link& link = fifos_[c].link;
      link.usPerByte = 1.0 / cost.bytesPerUs;
      link.latencyUs = cost.latencyUs;
      if (machine_.sameNode(conn.sender, conn.receiver)) {
        link.portOut = nvlinkPort(conn.sender, false);
        link.portIn = nvlinkPort(conn.receiver, true);
      } else {
        link.portOut = nicPort(conn.sender, conn.channel, false);
        link.portIn = nicPort(conn.receiver, conn.channel, true);
      }
      fifos_[c].senderAgent = set_.agentOf(conn.sender, conn.channel);
      fifos_[c].receiverAgent = set_.agentOf(conn.receiver, conn.channel);
    }
    const int nics = machine_.nodes * machine_.nicsPerNode;
    portFreeUs_.assign(2 * set_.nranks + 2 * nics, 0.0);
  }

  // An agent is private when no other agent sends through any port it sends through.
  void findPrivateAgents() {
    std::vector<int> user(portFreeUs_.size(), -1);  // -2: shared
    for (const TimedFifo& f : fifos_) {
      const int agent = f.senderAgent;
      for (int port : {f.link.portOut, f.link.portIn}) {
        if (user[port] == -1) {
          user[port] = agent;
        } else if (user[port] != agent) {
          user[port] = -2;
        }
      }
    }
    timed_.assign(set_.agents.size(), TimedAgent{});
    for (const TimedFifo& f : fifos_) {
      if (user[f.link.portOut] == -2 || user[f.link.portIn] == -2) {
        timed_[f.senderAgent].alone = false;
      }
    }
    for (const TimedAgent& t : timed_) result_.privateAgents += t.alone;
  }

  Status advance(int agent) {
    AgentCursor& a = agents_[agent];
    const AgentSchedule& runs = set_.agents[agent];
    while (a.settle(runs)) {
      TimedFifo* in = a.inConn >= 0 ? &fifos_[a.inConn] : nullptr;
      TimedFifo* out = a.outConn >= 0 ? &fifos_[a.outConn] : nullptr;
      if (in != nullptr && in->empty()) {
        in->receiverWaiting = true;
        return Status::success();
      }
      if (out != nullptr && out->full()) {
        out->senderWaiting = true;
        return Status::success();
      }
      double t = timed_[agent].freeUs;
      if (in != nullptr) t = std::max(t, in->arrivalUs[in->released % kSlots]);
      if (out != nullptr) t = std::max(t, out->freeAtUs[out->posted % kSlots]);
      if (out != nullptr && !timed_[agent].alone) {
        queue_.emplace(t, agent);  // moves when its turn on the shared ports comes
        return Status::success();
      }
      BRAID_TRY(moveSlice(agent, t));
    }
    a.finished = true;
    return Status::success();
  }

  // Moves the agent's next slice, ready at `readyUs`.
  Status moveSlice(int agent, double readyUs) {
    AgentCursor& a = agents_[agent];
    const uint64_t n = a.sliceLen();
    TimedFifo* in = a.inConn >= 0 ? &fifos_[a.inConn] : nullptr;
    TimedFifo* out = a.outConn >= 0 ? &fifos_[a.outConn] : nullptr;
    if (in != nullptr && in->sliceLen[in->released % kSlots] != n) {
      const auto& runs = set_.agents[agent];
      return internalError(set_.describeStep(agent, a.stepIndex(runs), a.step(runs)) +
                           ": received a slice of " +
                           std::to_string(in->sliceLen[in->released % kSlots]) +
                           " elements, expected " + std::to_string(n));
    }
    double start = readyUs;
    double end = readyUs;
    if (out != nullptr) {
      const Link& link = out->link;
      start = std::max({readyUs, portFreeUs_[link.portOut], portFreeUs_[link.portIn]});
      end = start + static_cast<double>(n * options_.elemBytes) * link.usPerByte;
      portFreeUs_[link.portOut] = end;
      portFreeUs_[link.portIn] = end;
      const int slot = static_cast<int>(out->posted % kSlots);
      out->arrivalUs[slot] = end + link.latencyUs;
      out->sliceLen[slot] = n;
      if (options_.trace) traceSend(agent, static_cast<size_t>(a.outConn) * kSlots + slot, start);
      ++out->posted;
      if (out->receiverWaiting) {
        out->receiverWaiting = false;
        ready_.add(out->receiverAgent);
      }
    }
    if (in != nullptr) {
      const int slot = static_cast<int>(in->released % kSlots);
      if (options_.trace) {
        traceReceive(agent, in->senderAgent, static_cast<size_t>(a.inConn) * kSlots + slot,
                     in->arrivalUs[slot]);
      }
      in->freeAtUs[slot] = end + in->link.latencyUs;
      ++in->released;
      if (in->senderWaiting) {
        in->senderWaiting = false;
        ready_.add(in->senderAgent);
      }
    }
    if (options_.trace) traceStep(agent, start, end);
    timed_[agent].freeUs = end;
    a.done += n;
    ++result_.slices;
    return Status::success();
  }

  void traceSend(int agent, size_t slotIndex, double startUs) {
    const AgentCursor& a = agents_[agent];
    origins_[slotIndex] = {a.stepIndex(set_.agents[agent]), startUs};
  }

  // Messages are drawn from the first slice's departure to the last slice's arrival.
  void traceReceive(int agent, int sender, size_t slotIndex, double arrivedUs) {
    const AgentCursor& a = agents_[agent];
    const SlotOrigin& origin = origins_[slotIndex];
    if (a.done == 0) messageStart_[agent] = origin;
    if (a.done + a.sliceLen() == a.count) {
      const SlotOrigin& first = messageStart_[agent];
      result_.messages.push_back(
          {sender, first.step, agent, a.stepIndex(set_.agents[agent]), first.sentUs, arrivedUs});
    }
  }

  void traceStep(int agent, double startUs, double endUs) {
    const AgentCursor& a = agents_[agent];
    if (a.done == 0) stepStartUs_[agent] = startUs;
    if (a.done + a.sliceLen() == a.count) {
      result_.steps.push_back(
          {agent, a.stepIndex(set_.agents[agent]), a.op, stepStartUs_[agent], endUs});
    }
  }

  const ScheduleSet& set_;
  const Machine& machine_;
  TimingOptions options_;
  std::vector<TimedFifo> fifos_;
  std::vector<double> portFreeUs_;
  std::vector<AgentCursor> agents_;
  std::vector<TimedAgent> timed_;
  ReadySet ready_;
  using Event = std::pair<double, int>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
  std::vector<SlotOrigin> origins_;
  std::vector<double> stepStartUs_;
  std::vector<SlotOrigin> messageStart_;
  TimingResult result_;
};

}  // namespace

HopCost hopCost(const Machine& m, int sender, int receiver, algo::Protocol protocol) {
  const bool ll = protocol == algo::Protocol::kLl;
  HopCost cost;
  if (m.sameNode(sender, receiver)) {
    cost.bytesPerUs = m.nvlinkBytesPerUs;
    cost.latencyUs = ll && m.nvlinkLatencyLlUs >= 0 ? m.nvlinkLatencyLlUs : m.nvlinkLatencyUs;
  } else {
    cost.bytesPerUs = m.netBytesPerUs;
    cost.latencyUs = ll && m.netLatencyLlUs >= 0 ? m.netLatencyLlUs : m.netLatencyUs;
  }
  if (ll) cost.bytesPerUs /= 2;
  return cost;
}

Result<TimingResult> simulateTiming(const ScheduleSet& set, const Machine& machine,
                                    const TimingOptions& options) {
  if (set.nranks > machine.ranks()) {
    return invalidArgument("the machine has " + std::to_string(machine.ranks()) + " GPUs for " +
                           std::to_string(set.nranks) + " ranks");
  }
  if (set.agents.size() != static_cast<size_t>(set.nranks) * set.nchannels) {
    return invalidArgument("simulateTiming: the schedule set is incomplete");
  }
  Simulator simulator(set, machine, options);
  return simulator.run();
}

}  // namespace braid::sim
