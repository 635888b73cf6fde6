// The verbs contexts' asynchronous events: see ib_async_events.h.
#include "transport/net/ib/ib_async_events.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstring>

#include "base/log.h"

namespace braid::transport::ib {
namespace {

/// Why a fatal event ends connections, for the message.
const char* fatalMeaning(ibv_event_type type) {
  switch (type) {
    case IBV_EVENT_PORT_ERR:
      return "the port went down";
    case IBV_EVENT_DEVICE_FATAL:
      return "the device failed";
    case IBV_EVENT_CQ_ERR:
      return "its completion queue overran";
    case IBV_EVENT_QP_FATAL:
      return "a queue pair failed";
    case IBV_EVENT_QP_REQ_ERR:
      return "a queue pair's peer refused a request as invalid";
    case IBV_EVENT_QP_ACCESS_ERR:
      return "a queue pair broke a memory protection rule";
    default:
      return nullptr;
  }
}

}  // namespace

const char* asyncEventName(ibv_event_type type) {
  switch (type) {
    case IBV_EVENT_CQ_ERR:
      return "IBV_EVENT_CQ_ERR";
    case IBV_EVENT_QP_FATAL:
      return "IBV_EVENT_QP_FATAL";
    case IBV_EVENT_QP_REQ_ERR:
      return "IBV_EVENT_QP_REQ_ERR";
    case IBV_EVENT_QP_ACCESS_ERR:
      return "IBV_EVENT_QP_ACCESS_ERR";
    case IBV_EVENT_COMM_EST:
      return "IBV_EVENT_COMM_EST";
    case IBV_EVENT_SQ_DRAINED:
      return "IBV_EVENT_SQ_DRAINED";
    case IBV_EVENT_PATH_MIG:
      return "IBV_EVENT_PATH_MIG";
    case IBV_EVENT_PATH_MIG_ERR:
      return "IBV_EVENT_PATH_MIG_ERR";
    case IBV_EVENT_DEVICE_FATAL:
      return "IBV_EVENT_DEVICE_FATAL";
    case IBV_EVENT_PORT_ACTIVE:
      return "IBV_EVENT_PORT_ACTIVE";
    case IBV_EVENT_PORT_ERR:
      return "IBV_EVENT_PORT_ERR";
    case IBV_EVENT_LID_CHANGE:
      return "IBV_EVENT_LID_CHANGE";
    case IBV_EVENT_PKEY_CHANGE:
      return "IBV_EVENT_PKEY_CHANGE";
    case IBV_EVENT_SM_CHANGE:
      return "IBV_EVENT_SM_CHANGE";
    case IBV_EVENT_SRQ_ERR:
      return "IBV_EVENT_SRQ_ERR";
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      return "IBV_EVENT_SRQ_LIMIT_REACHED";
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      return "IBV_EVENT_QP_LAST_WQE_REACHED";
    case IBV_EVENT_CLIENT_REREGISTER:
      return "IBV_EVENT_CLIENT_REREGISTER";
    case IBV_EVENT_GID_CHANGE:
      return "IBV_EVENT_GID_CHANGE";
    case IBV_EVENT_WQ_FATAL:
      return "IBV_EVENT_WQ_FATAL";
  }
  return "an unknown event";
}

std::optional<IbAsyncFailure> decideAsyncEvent(const IbPort& port, const ibv_async_event& event) {
  const char* meaning = fatalMeaning(event.event_type);
  if (meaning == nullptr) return std::nullopt;
  IbAsyncFailure failure;
  failure.port = &port;
  switch (event.event_type) {
    case IBV_EVENT_PORT_ERR:
      // The kernel sends a port's events to every context of the device: the other port's
      // connections hear of it through the context opened for that port.
      if (event.element.port_num != port.port) return std::nullopt;
      break;
    case IBV_EVENT_CQ_ERR:
      if (event.element.cq != port.cq) return std::nullopt;
      break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
      if (event.element.qp == nullptr) return std::nullopt;
      failure.qpNum = event.element.qp->qp_num;
      break;
    default:  // IBV_EVENT_DEVICE_FATAL: everything on the device
      break;
  }
  failure.what = port.name() + " reported " + asyncEventName(event.event_type) + " (" + meaning;
  if (failure.qpNum) failure.what += ": queue pair " + std::to_string(*failure.qpNum);
  failure.what += ")";
  return failure;
}

bool portCameBack(const IbPort& port, const ibv_async_event& event) {
  return event.event_type == IBV_EVENT_PORT_ACTIVE && event.element.port_num == port.port;
}

IbAsyncEvents::IbAsyncEvents(const VerbsApi& verbs, std::vector<IbPort*> ports, OnFailure onFailure,
                             OnPortBack onPortBack)
    : verbs_(verbs),
      ports_(std::move(ports)),
      onFailure_(std::move(onFailure)),
      onPortBack_(std::move(onPortBack)),
      stopFd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  for (IbPort* port : ports_) {
    // Non-blocking, so that taking events after poll() can stop at EAGAIN: rdma-core's way of
    // reading an async_fd without a thread blocked in the kernel.
    const int fd = port->context->async_fd;
    const int flags = fd >= 0 ? ::fcntl(fd, F_GETFL) : -1;
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
      BRAID_WARN(
          "verbs: %s's asynchronous events cannot be read (async_fd %d: %s); a port that "
          "goes down is noticed only when its writes time out",
          port->name().c_str(), fd, strerror(errno));
    }
  }
  if (stopFd_ < 0) {
    BRAID_WARN("verbs: no eventfd (%s); asynchronous events are not watched", strerror(errno));
    return;
  }
  thread_ = std::thread([this] { run(); });
}

IbAsyncEvents::~IbAsyncEvents() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    (void)!::write(stopFd_, &one, sizeof(one));
    thread_.join();
  }
  if (stopFd_ >= 0) ::close(stopFd_);
}

void IbAsyncEvents::run() {
  std::vector<pollfd> fds(ports_.size() + 1);
  fds[0] = {stopFd_, POLLIN, 0};
  for (size_t i = 0; i < ports_.size(); ++i) fds[i + 1] = {ports_[i]->context->async_fd, POLLIN, 0};
  for (;;) {
    // No timeout: the eventfd ends the wait. A negative fd is skipped by poll().
    const int ready = ::poll(fds.data(), fds.size(), -1);
    if (ready < 0 && errno != EINTR) {
      BRAID_WARN("verbs: waiting for asynchronous events failed (%s); no longer watched",
                 strerror(errno));
      return;
    }
    if (ready <= 0) continue;
    if (fds[0].revents != 0) return;
    for (size_t i = 0; i < ports_.size(); ++i) {
      pollfd& fd = fds[i + 1];
      if ((fd.revents & POLLIN) != 0) {
        drain(*ports_[i]);
      } else if (fd.revents != 0) {
        BRAID_WARN(
            "verbs: %s's async_fd failed (poll revents 0x%x); its events are no longer "
            "watched",
            ports_[i]->name().c_str(), static_cast<unsigned>(fd.revents));
        fd.fd = -1;
      }
    }
  }
}

void IbAsyncEvents::drain(IbPort& port) {
  for (;;) {
    ibv_async_event event{};
    if (verbs_.getAsyncEvent(port.context, &event) != 0) return;  // EAGAIN: none left
    std::optional<IbAsyncFailure> failure = decideAsyncEvent(port, event);
    const bool back = portCameBack(port, event);
    const char* name = asyncEventName(event.event_type);
    // Acknowledged before the failure travels on: the proxy's thread may destroy queue pairs.
    verbs_.ackAsyncEvent(&event);
    if (!failure) {
      BRAID_INFO("verbs: %s reported %s", port.name().c_str(), name);
      if (back && onPortBack_) onPortBack_(&port);
      continue;
    }
    BRAID_WARN("verbs: %s; failing the connections that use it", failure->what.c_str());
    onFailure_(std::move(*failure));
  }
}

}  // namespace braid::transport::ib
