// ncclGroupStart / ncclGroupEnd: operations issued inside a group are
// checked at once and run when the outermost group ends (group_api.cc).
#pragma once

#include <functional>

#include "api/api_util.h"

namespace braid::api {

/// How deeply this thread is nested in groups. Apart from the rest of the group's state, whose
/// members need a constructor: a thread-local of constant initialization is reached without a
/// check-and-construct wrapper, and every call of the API outside a group reads it.
extern thread_local int tlsGroupDepth;

/// How deeply this thread is nested in groups (0 = not in a group).
inline int groupDepth() { return tlsGroupDepth; }

/// Runs `op` now when not in a group; otherwise queues it for ncclGroupEnd.
/// `key` names the communicator the operation belongs to (or, for one being
/// created, its output handle): operations with one key run in order, those
/// with different keys concurrently.
/// `estimate`, when given, is what ncclGroupSimulateEnd adds up instead of
/// running `op` (the cost model's microseconds).
ncclResult_t runOrDefer(const void* key, std::function<Status()> op,
                        std::function<Result<double>()> estimate = nullptr);

/// runOrDefer for an operation of communicator `comm` (its key): a GPU
/// communicator's operations of one group go into as few kernel launches
/// as they can (Comm::beginFusedLaunch).
ncclResult_t runOrDefer(Comm* comm, std::function<Status()> op,
                        std::function<Result<double>()> estimate = nullptr);

/// Runs `fn` now when not in a group; otherwise once the communicator's operations of the
/// outermost group have been launched (their fused kernel enqueued), if they all succeeded. What
/// must follow a call's launch on its stream (a launch-completion event's record) goes here.
ncclResult_t runAfterLaunch(Comm* comm, std::function<Status()> fn);

/// Runs `fn` now when not in a group; otherwise once the outermost group's
/// operations have all run (ncclCommDestroy: a communicator goes only after
/// the operations queued for it, a finalize among them).
void runAfterGroup(std::function<void()> fn);

/// A checked send or receive: run at once outside a group; inside one, queued, and
/// at ncclGroupEnd consecutive sends and receives of a communicator run as
/// one batch (Comm::sendRecv), so their order cannot deadlock.
ncclResult_t sendRecvOrDefer(Comm* comm, const CheckedBatch& op, void* stream);

}  // namespace braid::api
