// The executor's ends of a FIFO to a rank on another host, whose other side is a proxy of this
// process: the socket FIFOs (socket_fifo.cc, socket_stripes.h) and the verbs FIFOs (ib/ib_fifo.cc).
//
// The FIFO is a private one (shm::PrivateFifo): the executor waits on it, with its own deadline,
// exactly as on a FIFO to a rank of its host, and the proxy drives its other side. A subclass
// adds the proxy as a member of its own, which therefore stops before the FIFO goes.
#pragma once

#include <utility>

#include "transport/connection.h"
#include "transport/shm/shm_fifo.h"

namespace braid::transport::net {

class ProxiedSendEnd : public SendEnd {
 public:
  size_t slotBytes() const override { return fifo_.send->slotBytes(); }
  Result<void*> waitSlot(const WaitContext& ctx) override { return fifo_.send->waitSlot(ctx); }
  void* trySlot() override { return fifo_.send->trySlot(); }
  void post(size_t bytes) override { fifo_.send->post(bytes); }

 protected:
  explicit ProxiedSendEnd(shm::PrivateFifo fifo) : fifo_(std::move(fifo)) {}
  shm::PrivateFifo fifo_;
};

class ProxiedRecvEnd : public RecvEnd {
 public:
  size_t slotBytes() const override { return fifo_.recv->slotBytes(); }
  Result<const void*> waitSlot(const WaitContext& ctx, size_t* bytes) override {
    return fifo_.recv->waitSlot(ctx, bytes);
  }
  const void* trySlot(size_t* bytes) override { return fifo_.recv->trySlot(bytes); }
  void release() override { fifo_.recv->release(); }

 protected:
  explicit ProxiedRecvEnd(shm::PrivateFifo fifo) : fifo_(std::move(fifo)) {}
  shm::PrivateFifo fifo_;
};

}  // namespace braid::transport::net
