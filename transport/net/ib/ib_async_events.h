// The asynchronous events of the verbs contexts a communicator opened, and what they mean for
// its connections.
//
// An HCA tells of what no completion carries through its contexts' async events: a port that
// went down (IBV_EVENT_PORT_ERR) or came back, a device that died (IBV_EVENT_DEVICE_FATAL), a
// queue pair that failed outside any work request (IBV_EVENT_QP_FATAL, QP_REQ_ERR,
// QP_ACCESS_ERR), a completion queue that overran (IBV_EVENT_CQ_ERR). Without them a down port
// is noticed only when a write's retries run out: 4.096 us * 2^IB_TIMEOUT * (IB_RETRY_CNT + 1),
// 34 s with NCCL's defaults, and a call waiting to receive on it learns nothing at all.
//
// IbAsyncEvents is one thread per set of ports (per process, ib_port_set.h) that waits on the
// async_fd of every context the set opened (one poll() over them all, plus an eventfd that
// stops it), takes each event, decides what it means (decideAsyncEvent, a pure function),
// acknowledges it (a QP or CQ cannot be destroyed while an event about it is unacknowledged),
// and hands a fatal one to the proxy (IbProxy::failAsync), which fails every FIFO end that uses
// the port or the queue pair on its own thread; each end then reports the failure to its
// communicator, naming the NIC, the event and the peer, and every call waiting on it ends at
// once. Informational events (PORT_ACTIVE, LID_CHANGE, GID_CHANGE, SM_CHANGE, ...) are logged at
// INFO and end nothing; PORT_ACTIVE also lets connections made from then on use a port that
// went down (IbProxy::portBack).
//
// Why one thread for all of the set's contexts rather than one per context: the contexts are
// few (one per port) and their events rare, so one poll() over their fds costs nothing more,
// and the thread stops at once on the eventfd rather than on a timeout per context. And one
// reader per context: an event is taken once, so two readers would each miss some.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "transport/net/ib/ib_device.h"

namespace braid::transport::ib {

/// "IBV_EVENT_PORT_ERR"; "an unknown event" for a type rdma-core does not define.
const char* asyncEventName(ibv_event_type type);

/// What a fatal event ends: every queue pair on `port`, or only the one numbered `qpNum` there.
struct IbAsyncFailure {
  const IbPort* port = nullptr;
  std::optional<uint32_t> qpNum;
  std::string what;  ///< "mlx5_0:1 reported IBV_EVENT_PORT_ERR (the port went down)"

  bool ends(const IbPort& on, uint32_t qp) const { return &on == port && (!qpNum || *qpNum == qp); }
};

/// What `event`, taken from `port`'s context, means for the connections: nullopt where it ends
/// none (an informational event, a port event about another port of the device, an event about
/// a CQ that is not the port's). Reads the event's element only, before it is acknowledged.
std::optional<IbAsyncFailure> decideAsyncEvent(const IbPort& port, const ibv_async_event& event);

/// Whether `event` says that `port` is up again (IBV_EVENT_PORT_ACTIVE for its number): its
/// connections that failed stay failed, but new ones may use it.
bool portCameBack(const IbPort& port, const ibv_async_event& event);

class IbAsyncEvents {
 public:
  using OnFailure = std::function<void(IbAsyncFailure)>;
  using OnPortBack = std::function<void(const IbPort*)>;
  /// Starts watching the contexts of `ports` (their async_fds made non-blocking); `onFailure`
  /// hears every fatal event, `onPortBack` every port that is active again, on the watcher's
  /// thread.
  IbAsyncEvents(const VerbsApi& verbs, std::vector<IbPort*> ports, OnFailure onFailure,
                OnPortBack onPortBack = {});
  ~IbAsyncEvents();
  IbAsyncEvents(const IbAsyncEvents&) = delete;
  IbAsyncEvents& operator=(const IbAsyncEvents&) = delete;

 private:
  void run();
  /// Takes, decides and acknowledges every event waiting on `port`'s context.
  void drain(IbPort& port);

  const VerbsApi& verbs_;
  std::vector<IbPort*> ports_;
  OnFailure onFailure_;
  OnPortBack onPortBack_;
  int stopFd_ = -1;
  std::thread thread_;
};

}  // namespace braid::transport::ib
