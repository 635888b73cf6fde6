// NCCL's API events (profiler plugins v5 and later: group API, collective API, point-to-point
// API), started here as the application calls, in the order NCCL starts them:
//
//   the first call of a thread's outermost group, or a call outside any group (a group of depth
//   1 of its own), starts the thread's group API event with its communicator's profiler, and
//   says at once that ncclGroupStart's part is over (GroupStartApiStop);
//   each call's collective or point-to-point API event starts under it and stops once the call
//   is queued (in a group) or before it runs (outside one); the call's own event names it as
//   its parent when it starts (comm/call_events.h);
//   the outermost ncclGroupEnd, or the call outside a group, says the group's end began
//   (GroupEndApiStart), runs the calls (a GPU communicator's kernel launches start their events
//   under the group API event) and stops it.
//
// Nothing here runs unless a communicator has a profiler plugin: a call checks one pointer.
#pragma once

#include <vector>

#include "braid/comm.h"
#include "profiler/profiler_plugin.h"

namespace braid::api {

/// One call's API events: its own, from the call as made until it is queued or about to run,
/// and outside a group the group API event it makes alone, until the call ran.
class ApiEvent {
 public:
  /// Starts the API event of a call on `comm` (its profiler is not null), a collective's when
  /// `collective`, under the thread's group API event, which it starts if none runs.
  ApiEvent(Comm& comm, const profiler::ApiFields& fields, bool collective);
  /// Stops what still runs; outside a group, the call ran: its group API event stops.
  ~ApiEvent();
  ApiEvent(const ApiEvent&) = delete;
  ApiEvent& operator=(const ApiEvent&) = delete;

  /// What the call carries as its profilerApiEvent; null where the plugin started none.
  void* handle() const { return handle_; }
  /// The call is queued (in a group) or about to run (outside one): its event stops, and
  /// outside a group the group's end begins.
  void stop();

 private:
  Comm& comm_;
  const bool lone_;  // made outside any group
  void* handle_ = nullptr;
  bool stopped_ = false;
};

/// The fields of a collective's API event.
profiler::ApiFields collectiveApiFields(const Comm& comm, const CollectiveCall& call);
/// The fields of a send's or receive's.
profiler::ApiFields p2pApiFields(const Comm& comm, const P2pOp& op, void* stream);

/// Whether the thread has a group API event running (a call of its group started one).
bool groupApiRunning();
/// The thread's outermost group (or lone call) is about to run its calls on `comms`:
/// GroupEndApiStart, and their launches go under the group API event. Nothing where the thread
/// has no group API event.
void groupEndBegins(const std::vector<Comm*>& comms);
/// Its calls ran: the group API event stops, and the launches of `comms` no longer go under it.
void groupEnded(const std::vector<Comm*>& comms);

}  // namespace braid::api
