// The emulated HCA's asynchronous events: see emulated_async_events.h.
#include "emulation/ib/emulated_async_events.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/log.h"

namespace braid::transport::ib::emulated {

AsyncEventQueue::AsyncEventQueue() : fd_(::eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (fd_ < 0) BRAID_WARN("emulated HCA: no eventfd for async events: %s", strerror(errno));
}

AsyncEventQueue::~AsyncEventQueue() {
  if (fd_ >= 0) ::close(fd_);
}

void AsyncEventQueue::push(const ibv_async_event& event) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(event);
  uint64_t one = 1;
  if (fd_ >= 0) (void)!::write(fd_, &one, sizeof(one));
}

int AsyncEventQueue::get(ibv_async_event* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (events_.empty()) {
    errno = EAGAIN;
    return -1;
  }
  // One count per event: the fd stays readable exactly while events wait.
  uint64_t count = 0;
  if (fd_ >= 0) (void)!::read(fd_, &count, sizeof(count));
  *out = events_.front();
  events_.pop_front();
  return 0;
}

void PortEvents::subscribe(AsyncEventQueue* queue) {
  std::lock_guard<std::mutex> lock(mu_);
  queues_.push_back(queue);
}

void PortEvents::unsubscribe(AsyncEventQueue* queue) {
  std::lock_guard<std::mutex> lock(mu_);
  queues_.erase(std::remove(queues_.begin(), queues_.end(), queue), queues_.end());
}

void PortEvents::takeDown(uint8_t port) {
  if (port < 1 || port > 32) return;
  const uint32_t bit = 1u << (port - 1);
  if ((down_.fetch_or(bit) & bit) != 0) return;
  ibv_async_event event{};
  event.event_type = IBV_EVENT_PORT_ERR;
  event.element.port_num = port;
  std::lock_guard<std::mutex> lock(mu_);
  BRAID_INFO("emulated HCA %s: port %d is down; IBV_EVENT_PORT_ERR to its %zu open contexts",
             device_.c_str(), port, queues_.size());
  for (AsyncEventQueue* queue : queues_) queue->push(event);
}

}  // namespace braid::transport::ib::emulated
