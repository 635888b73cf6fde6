// Groups. Operations issued between ncclGroupStart and the outermost
// ncclGroupEnd are checked at once and run at the end: those of one
// communicator in the order they were issued, those of different
// communicators concurrently, one thread per communicator. Concurrency is
// what NCCL's semantics need when one thread drives several ranks (creating
// them, or running a collective on each): every call blocks until all ranks
// take part, so running them one after another would deadlock.
// Consecutive sends and receives of one communicator are fused into one
// batch (Comm::sendRecv), which advances them all at once.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/api_events.h"
#include "api/group.h"
#include "base/worker_pool.h"

namespace braid::api {
namespace {

// A queued operation: a send or receive (fused with its neighbours), or
// anything else.
struct GroupOp {
  std::function<Status()> run;
  std::optional<CheckedBatch> p2p;
  void* stream = nullptr;                    ///< a send's or receive's stream
  std::function<Result<double>()> estimate;  ///< the model's time; empty for communicator creation
};

// The operations of one communicator (or one communicator being created).
struct GroupTarget {
  const void* key;
  Comm* comm = nullptr;  // for sends and receives
  std::vector<GroupOp> ops;
  std::vector<std::function<Status()>> afterLaunch;  // runAfterLaunch's, in the order given
};

struct GroupState {
  std::vector<GroupTarget> targets;          // in the order each was first used
  std::vector<std::function<void()>> after;  // runAfterGroup's, in the order given
};

thread_local GroupState tlsGroup;

// Visits a target's operations in order, consecutive sends and receives on
// one stream as one batch (onBatch) and anything else alone (onOp); stops
// at the first failure. Running a group and estimating it both walk it
// this way.
template <typename OnBatch, typename OnOp>
Status walkTarget(const GroupTarget& target, OnBatch onBatch, OnOp onOp) {
  std::optional<CheckedBatch> batch;
  void* batchStream = nullptr;
  for (const auto& op : target.ops) {
    if (op.p2p) {
      if (batch && op.stream != batchStream) {
        BRAID_TRY(onBatch(*batch, batchStream));
        batch.reset();
      }
      if (batch) {
        batch->append(*op.p2p);
      } else {
        batch = *op.p2p;
      }
      batchStream = op.stream;
      continue;
    }
    if (batch) BRAID_TRY(onBatch(*batch, batchStream));
    batch.reset();
    BRAID_TRY(onOp(op));
  }
  if (batch) BRAID_TRY(onBatch(*batch, batchStream));
  return Status::success();
}

Status runTargetOps(const GroupTarget& target) {
  return walkTarget(
      target,
      [&](const CheckedBatch& batch, void* stream) {
        return target.comm->sendRecv(batch, stream).withContext("ncclSend/ncclRecv");
      },
      [](const GroupOp& op) { return op.run(); });
}

// A GPU communicator's operations go into as few launches as they can.
Status runTarget(const GroupTarget& target) {
  if (target.comm == nullptr) return runTargetOps(target);
  target.comm->beginFusedLaunch();
  Status s = runTargetOps(target);
  Status launched = target.comm->endFusedLaunch();
  if (!s.ok()) return s;
  BRAID_TRY(launched);
  for (const auto& fn : target.afterLaunch) BRAID_TRY(fn());
  return Status::success();
}

// The model's time for runTarget(target): its operations one after another.
Result<double> estimateTarget(const GroupTarget& target) {
  double sum = 0;
  auto add = [&](Result<double> us) -> Status {
    BRAID_TRY(us.status());
    sum += us.value();
    return Status::success();
  };
  BRAID_TRY(walkTarget(
      target,
      [&](const CheckedBatch& batch, void*) {
        return add(target.comm->estimateP2pUs(batch.ops()));
      },
      [&](const GroupOp& op) {
        // Creating a communicator has no estimate: it moves no data.
        return op.estimate ? add(op.estimate()) : Status::success();
      }));
  return sum;
}

// The communicators of the targets (those with calls: a communicator being created has none).
std::vector<Comm*> commsOf(const std::vector<GroupTarget>& targets) {
  std::vector<Comm*> comms;
  for (const GroupTarget& t : targets) {
    if (t.comm != nullptr) comms.push_back(t.comm);
  }
  return comms;
}

// Runs every target's operations; targets run concurrently, on this
// thread's workers (made once, reused by every group it ends). Returns the
// first failure in the order the targets were first used.
Status runGroup(const std::vector<GroupTarget>& targets) {
  if (targets.empty()) return Status::success();
  if (targets.size() == 1) return runTarget(targets[0]);
  thread_local WorkerPool pool;
  std::vector<Status> results(targets.size());
  std::vector<std::function<void()>> jobs;
  for (size_t i = 0; i < targets.size(); ++i) {
    jobs.push_back([&, i] { results[i] = runTarget(targets[i]); });
  }
  pool.runConcurrently(jobs);
  for (auto& r : results) BRAID_TRY(r);
  return Status::success();
}

}  // namespace

thread_local int tlsGroupDepth = 0;

namespace {

GroupTarget& targetFor(const void* key) {
  auto& targets = tlsGroup.targets;
  auto it = std::find_if(targets.begin(), targets.end(),
                         [key](const GroupTarget& t) { return t.key == key; });
  if (it != targets.end()) return *it;
  targets.push_back({key, nullptr, {}, {}});
  return targets.back();
}

}  // namespace

ncclResult_t runOrDefer(const void* key, std::function<Status()> op,
                        std::function<Result<double>()> estimate) {
  if (tlsGroupDepth == 0) return report(op());
  targetFor(key).ops.push_back({std::move(op), std::nullopt, nullptr, std::move(estimate)});
  return ncclSuccess;
}

ncclResult_t runOrDefer(Comm* comm, std::function<Status()> op,
                        std::function<Result<double>()> estimate) {
  if (tlsGroupDepth == 0) return report(op());
  GroupTarget& target = targetFor(comm);
  target.comm = comm;
  target.ops.push_back({std::move(op), std::nullopt, nullptr, std::move(estimate)});
  return ncclSuccess;
}

ncclResult_t runAfterLaunch(Comm* comm, std::function<Status()> fn) {
  if (tlsGroupDepth == 0) return report(fn());
  GroupTarget& target = targetFor(comm);
  target.comm = comm;
  target.afterLaunch.push_back(std::move(fn));
  return ncclSuccess;
}

void runAfterGroup(std::function<void()> fn) {
  if (tlsGroupDepth == 0) {
    fn();
    return;
  }
  tlsGroup.after.push_back(std::move(fn));
}

ncclResult_t sendRecvOrDefer(Comm* comm, const CheckedBatch& op, void* stream) {
  if (tlsGroupDepth == 0) return report(comm->sendRecv(op, stream));
  GroupTarget& target = targetFor(comm);
  target.comm = comm;
  target.ops.push_back({nullptr, op, stream, nullptr});
  return ncclSuccess;
}

}  // namespace braid::api

BRAID_NCCL_API(ncclResult_t, ncclGroupStart) {
  ++braid::api::tlsGroupDepth;
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclGroupEnd) {
  auto& g = braid::api::tlsGroup;
  int& depth = braid::api::tlsGroupDepth;
  if (depth == 0) {
    return braid::api::report(braid::invalidUsage("ncclGroupEnd without ncclGroupStart"));
  }
  if (--depth > 0) return ncclSuccess;
  auto targets = std::move(g.targets);
  auto after = std::move(g.after);
  g = {};
  // The communicators whose launches go under the group API event, gathered only where one
  // runs: a group end without a profiler allocates nothing for it.
  std::vector<braid::Comm*> comms;
  if (braid::api::groupApiRunning()) comms = braid::api::commsOf(targets);
  braid::api::groupEndBegins(comms);
  const braid::Status ran = braid::api::runGroup(targets);
  braid::api::groupEnded(comms);  // before a destroy queued in the group runs
  for (auto& fn : after) fn();
  return braid::api::report(ran);
}

// The group ends without running anything, as NCCL's simulation does, and
// simInfo->estimatedTime gets the cost model's time for it: each
// communicator's operations one after another, as runTarget would run them
// (consecutive sends and receives as one batch), communicators at once (as
// ncclGroupEnd would run them), so the longest communicator's sum.
BRAID_NCCL_API(ncclResult_t, ncclGroupSimulateEnd, ncclSimInfo_t* simInfo) {
  auto& g = braid::api::tlsGroup;
  int& depth = braid::api::tlsGroupDepth;
  if (depth == 0) {
    return braid::api::report(braid::invalidUsage("ncclGroupSimulateEnd without ncclGroupStart"));
  }
  if (simInfo != nullptr && simInfo->magic != 0x74685283u) {
    return braid::api::report(braid::invalidArgument(
        "ncclGroupSimulateEnd: simInfo was not initialized with NCCL_SIM_INFO_INITIALIZER"));
  }
  if (--depth > 0) return ncclSuccess;
  auto targets = std::move(g.targets);
  auto after = std::move(g.after);
  g = {};
  braid::api::groupEndBegins({});
  braid::api::groupEnded({});   // nothing runs
  for (auto& fn : after) fn();  // destroys are not simulated: the handles go as asked
  double longest = 0;
  for (const auto& target : targets) {
    braid::Result<double> us = braid::api::estimateTarget(target);
    if (!us.ok()) return braid::api::report(us.status().withContext("ncclGroupSimulateEnd"));
    longest = std::max(longest, us.value());
  }
  if (simInfo != nullptr) simInfo->estimatedTime = static_cast<float>(longest);
  return ncclSuccess;
}
