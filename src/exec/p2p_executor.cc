// Progress loop of the point-to-point executor (see p2p_executor.h).
//
// Framing: the first slice of every message starts with a MessageHeader that
// carries the message's size, so a receive that does not match the send is
// caught at its first slice instead of reading the next message's bytes.
// Later slices are payload only. Both sides cut a message the same way:
// first slice slotBytes - header, then slotBytes each.
#include "exec/p2p_executor.h"

#include <sched.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include "kernels/engine/sync.h"
#include "kernels/host_reduce.h"

namespace braid::exec {
namespace {

struct MessageHeader {
  uint64_t magic;
  uint64_t bytes;
};
constexpr uint64_t kHeaderMagic = 0x3250504449415242ull;  // "BRAIDPP2"

struct TaskState {
  const P2pTask* task;
  size_t done = 0;  // payload bytes moved
  bool finished = false;
};

// Matches sends to self with receives from self, in order, and copies.
Status runSelf(int rank, const std::vector<P2pTask>& tasks) {
  std::vector<const P2pTask*> sends, recvs;
  for (const auto& t : tasks) {
    if (t.peer != rank) continue;
    (t.send ? sends : recvs).push_back(&t);
  }
  if (sends.size() != recvs.size()) {
    return invalidUsage(std::to_string(sends.size()) + " send(s) to self but " +
                        std::to_string(recvs.size()) +
                        " receive(s) from self in one group: each needs its match");
  }
  for (size_t i = 0; i < sends.size(); ++i) {
    if (sends[i]->bytes != recvs[i]->bytes) {
      return invalidUsage("send to self of " + std::to_string(sends[i]->bytes) +
                          " bytes does not match the receive from self of " +
                          std::to_string(recvs[i]->bytes) + " bytes");
    }
    kernels::copyBytes(recvs[i]->recvBuffer, sends[i]->sendBuffer, sends[i]->bytes);
  }
  return Status::success();
}

// Moves one slice of a send if a slot is free; returns whether it moved.
Result<bool> advanceSend(TaskState& st, P2pLinks& links) {
  BRAID_ASSIGN_OR_RETURN(transport::SendEnd * end, links.trySendTo(st.task->peer));
  if (end == nullptr) return false;
  void* slot = end->trySlot();
  if (slot == nullptr) return false;
  char* dst = static_cast<char*>(slot);
  size_t room = end->slotBytes();
  size_t used = 0;
  if (st.done == 0) {
    MessageHeader h{kHeaderMagic, st.task->bytes};
    memcpy(dst, &h, sizeof(h));
    used = sizeof(h);
  }
  size_t n = std::min(room - used, st.task->bytes - st.done);
  kernels::copyBytes(dst + used, static_cast<const char*>(st.task->sendBuffer) + st.done, n);
  end->post(used + n);
  st.done += n;
  st.finished = st.done == st.task->bytes;
  return true;
}

// Moves one slice of a receive if one has arrived; returns whether it moved.
Result<bool> advanceRecv(TaskState& st, P2pLinks& links) {
  BRAID_ASSIGN_OR_RETURN(transport::RecvEnd * end, links.recvFrom(st.task->peer));
  size_t got = 0;
  const void* slot = end->trySlot(&got);
  if (slot == nullptr) return false;
  const char* src = static_cast<const char*>(slot);
  size_t used = 0;
  if (st.done == 0) {
    MessageHeader h{};
    if (got >= sizeof(h)) memcpy(&h, src, sizeof(h));
    if (h.magic != kHeaderMagic) {
      return internalError("garbled message from rank " + std::to_string(st.task->peer));
    }
    if (h.bytes != st.task->bytes) {
      return invalidUsage("rank " + std::to_string(st.task->peer) + " sent " +
                          std::to_string(h.bytes) + " bytes but the matching receive expects " +
                          std::to_string(st.task->bytes) + " (counts or datatypes differ)");
    }
    used = sizeof(h);
  }
  size_t n = got - used;
  if (n > st.task->bytes - st.done) {
    return internalError("rank " + std::to_string(st.task->peer) + " sent a slice past the end");
  }
  kernels::copyBytes(static_cast<char*>(st.task->recvBuffer) + st.done, src + used, n);
  end->release();
  st.done += n;
  st.finished = st.done == st.task->bytes;
  return true;
}

std::string pendingPeers(const std::vector<TaskState>& states) {
  std::string s;
  for (const auto& st : states) {
    if (st.finished) continue;
    if (!s.empty()) s += ", ";
    s += std::string(st.task->send ? "send to " : "receive from ") + "rank " +
         std::to_string(st.task->peer);
  }
  return s;
}

// Waiting when nothing moved: poll for the spin budget, then yield, then
// nap briefly (a batch waits on several connections, so it cannot sleep on
// one futex).
class Backoff {
 public:
  Backoff(const transport::WaitContext& wait, kernels::engine::WaitRecord* record)
      : wait_(wait), record_(record) {}
  void reset() {
    if (idle_ && record_ != nullptr) {
      kernels::engine::storeRelaxed(&record_->kind, 0u);
    }
    idle_ = false;
  }
  Status pause(const std::vector<TaskState>& states) {
    auto now = std::chrono::steady_clock::now();
    if (!idle_) {
      idle_ = true;
      idleSince_ = now;
      note(states);
    }
    if (wait_.abort && wait_.abort->load(std::memory_order_relaxed)) {
      return remoteError("aborted during send/recv (" + pendingPeers(states) + ")");
    }
    if (wait_.deadline.expired()) {
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - idleSince_).count();
      return remoteError("timed out after " + std::to_string(ms) + " ms waiting in send/recv (" +
                         pendingPeers(states) + ")");
    }
    auto idle = now - idleSince_;
    if (idle < std::chrono::nanoseconds(wait_.spinNs)) return Status::success();
    if (idle < std::chrono::nanoseconds(wait_.spinNs) + std::chrono::microseconds(200)) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    return Status::success();
  }

 private:
  // The first unfinished transfer is what the batch waits for, as far as a person can tell.
  void note(const std::vector<TaskState>& states) {
    if (record_ == nullptr) return;
    for (const TaskState& st : states) {
      if (st.finished) continue;
      namespace engine = kernels::engine;
      engine::storeRelaxed(reinterpret_cast<uint32_t*>(&record_->peer),
                           static_cast<uint32_t>(st.task->peer));
      engine::storeRelaxed(&record_->instr, 0u);
      engine::storeRelaxed(&record_->sinceNs, engine::clockNs());
      engine::storeRelaxed(
          &record_->kind,
          static_cast<uint32_t>(st.task->send ? engine::WaitKind::kSend : engine::WaitKind::kRecv));
      return;
    }
  }

  const transport::WaitContext& wait_;
  kernels::engine::WaitRecord* record_;
  bool idle_ = false;
  std::chrono::steady_clock::time_point idleSince_{};
};

}  // namespace

Status runP2p(int rank, const std::vector<P2pTask>& tasks, P2pLinks& links,
              const transport::WaitContext& wait, kernels::engine::WaitRecord* waitRecord) {
  BRAID_TRY(runSelf(rank, tasks));
  std::vector<TaskState> states;
  for (const auto& t : tasks) {
    if (t.peer != rank && t.bytes > 0) states.push_back({&t});
  }
  // Make every receiving end first, so peers waiting to open them can start.
  for (const auto& st : states) {
    if (!st.task->send) BRAID_TRY(links.recvFrom(st.task->peer).status());
  }
  Backoff backoff(wait, waitRecord);
  size_t remaining = states.size();
  while (remaining > 0) {
    bool moved = false;
    for (size_t i = 0; i < states.size(); ++i) {
      TaskState& st = states[i];
      if (st.finished) continue;
      // Only the oldest unfinished message per (peer, direction) may move.
      bool blockedByEarlier = false;
      for (size_t j = 0; j < i && !blockedByEarlier; ++j) {
        blockedByEarlier = !states[j].finished && states[j].task->peer == st.task->peer &&
                           states[j].task->send == st.task->send;
      }
      if (blockedByEarlier) continue;
      BRAID_ASSIGN_OR_RETURN(bool step,
                             st.task->send ? advanceSend(st, links) : advanceRecv(st, links));
      if (step) {
        moved = true;
        if (st.finished) --remaining;
      }
    }
    if (moved) {
      backoff.reset();
    } else {
      BRAID_TRY(backoff.pause(states));
    }
  }
  return Status::success();
}

}  // namespace braid::exec
