#include "transport/net/ib/gpu_ib_fifo.h"
#include "base/socket.h"

#include <string>
#include <utility>

#include "transport/net/proxied_gpu_ends.h"

namespace braid::transport::ib {
namespace {

namespace engine = kernels::engine;

using GpuIbSendEnd = net::PumpedEnd<net::ProxiedGpuSendEnd, IbSendPump>;
using GpuIbRecvEnd = net::PumpedEnd<net::ProxiedGpuRecvEnd, IbRecvPump>;

}  // namespace

Result<std::unique_ptr<cuda_ipc::GpuSendEnd>> openGpuIbSendEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes, engine::FifoCursor* cursor,
    engine::FifoCursor* proxyCursor, gpu::Stream stream, IbNetwork& network,
    braid::sockets::Socket connected, int peer, int64_t timeoutMs, const std::string& nic) {
  BRAID_ASSIGN_OR_RETURN(std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo,
                         net::makePinnedFifo(runtime, name, slotBytes, proxyCursor, stream));
  auto end = std::make_unique<GpuIbSendEnd>(std::move(fifo), cursor);
  BRAID_ASSIGN_OR_RETURN(
      std::unique_ptr<IbSendPump> pump,
      IbSendPump::start(network, end->fifoRef(), std::move(connected), peer, timeoutMs, nic));
  end->setPump(std::move(pump));
  return std::unique_ptr<cuda_ipc::GpuSendEnd>(std::move(end));
}

Result<std::unique_ptr<cuda_ipc::GpuRecvEnd>> openGpuIbRecvEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes, engine::FifoCursor* cursor,
    gpu::Stream stream, IbNetwork& network, IbRecvPump::SocketTaker take, int peer,
    int64_t timeoutMs, const std::string& nic) {
  BRAID_ASSIGN_OR_RETURN(std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo,
                         net::makePinnedFifo(runtime, name, slotBytes, cursor, stream));
  auto end = std::make_unique<GpuIbRecvEnd>(std::move(fifo));
  BRAID_ASSIGN_OR_RETURN(
      std::unique_ptr<IbRecvPump> pump,
      IbRecvPump::start(network, end->fifoRef(), std::move(take), peer, timeoutMs, nic));
  end->setPump(std::move(pump));
  return std::unique_ptr<cuda_ipc::GpuRecvEnd>(std::move(end));
}

}  // namespace braid::transport::ib
