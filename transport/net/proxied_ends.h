// The executor's ends of a FIFO to a rank on another host, whose other side is a proxy of this
// process: the socket FIFOs (socket/socket_fifo.cc, socket/socket_stripes.h) and the verbs FIFOs
// (ib/ib_fifo.cc).
//
// The FIFO is a private one (shm::PrivateFifo): the executor waits on it, with its own deadline,
// exactly as on a FIFO to a rank of its host, and the proxy drives its other side. A subclass
// adds the proxy as a member of its own, which therefore stops before the FIFO goes; where the
// proxy is a pump over the FIFO as the engine addresses it (the striped socket pumps, the verbs
// pumps), that subclass is PumpedEnd, for host and GPU ends alike.
#pragma once

#include <memory>
#include <utility>

#include "kernels/engine/fifo.h"
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
  kernels::engine::FifoRef fifoRef() const { return fifo_.ref; }
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
  kernels::engine::FifoRef fifoRef() const { return fifo_.ref; }
  shm::PrivateFifo fifo_;
};

/// An end of `Shell` (ProxiedSendEnd, ProxiedRecvEnd, or the GPU ones of proxied_gpu_ends.h)
/// whose other side a `Pump` drives, over the FIFO as the engine addresses it (fifoRef()). A host
/// end and its GPU twin differ only in their shell, so each pump has one end class, not two.
/// The pump is made once the end is (it needs the FIFO) and, a member, drains and stops before
/// the shell's FIFO goes.
template <typename Shell, typename Pump>
class PumpedEnd final : public Shell {
 public:
  template <typename... ShellArgs>
  explicit PumpedEnd(ShellArgs&&... args) : Shell(std::forward<ShellArgs>(args)...) {}
  kernels::engine::FifoRef fifoRef() const { return Shell::fifoRef(); }
  void setPump(std::unique_ptr<Pump> pump) { pump_ = std::move(pump); }
  /// Makes the pump over the FIFO, from the rest of its constructor's arguments.
  template <typename... PumpArgs>
  void makePump(PumpArgs&&... args) {
    pump_ = std::make_unique<Pump>(fifoRef(), std::forward<PumpArgs>(args)...);
  }

 private:
  std::unique_ptr<Pump> pump_;
};

}  // namespace braid::transport::net
