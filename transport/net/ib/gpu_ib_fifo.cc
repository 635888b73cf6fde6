#include "transport/net/ib/gpu_ib_fifo.h"
#include "base/socket.h"

#include <string>
#include <utility>

#include "transport/net/device_slots_fifo.h"
#include "transport/net/ib/dmabuf_fd.h"
#include "transport/net/proxied_gpu_ends.h"

namespace braid::transport::ib {
namespace {

namespace engine = kernels::engine;

using GpuIbSendEnd = net::PumpedEnd<net::ProxiedGpuSendEnd, IbSendPump>;
using GpuIbRecvEnd = net::PumpedEnd<net::ProxiedGpuRecvEnd, IbRecvPump>;

/// The FIFO a GPU end of `place` runs on, and, for kDmabuf, the export of its slots.
struct GpuIbFifo {
  std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo;
  DmabufFd dmabuf;
};

Result<GpuIbFifo> makeFifo(gpu::Runtime& runtime, const std::string& name, size_t slotBytes,
                           engine::FifoCursor* cursor, gpu::Stream stream, SlotPlace place) {
  GpuIbFifo made;
  if (!inDeviceMemory(place)) {
    BRAID_ASSIGN_OR_RETURN(made.fifo,
                           net::makePinnedFifo(runtime, name, slotBytes, cursor, stream));
    return made;
  }
  BRAID_ASSIGN_OR_RETURN(std::unique_ptr<net::DeviceSlotsFifo> fifo,
                         net::DeviceSlotsFifo::create(runtime, slotBytes, cursor));
  if (place == SlotPlace::kDmabuf) {
    Result<int> fd = runtime.exportDmabuf(fifo->end().fifo.slots, fifo->slotsBytes());
    if (!fd.ok()) return fd.status().withContext("GPU FIFO " + name + ": GPUDirect RDMA");
    made.dmabuf = DmabufFd(fd.value());
  }
  made.fifo = std::move(fifo);
  return made;
}

SlotMemory slotMemory(const GpuIbFifo& made, const GdrChoice& gdr) {
  SlotMemory memory;
  memory.place = gdr.place;
  memory.dmabufFd = made.dmabuf.get();
  memory.flush = gdr.flush && inDeviceMemory(gdr.place);
  return memory;
}

}  // namespace

Result<std::unique_ptr<cuda_ipc::GpuSendEnd>> openGpuIbSendEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes, engine::FifoCursor* cursor,
    engine::FifoCursor* proxyCursor, gpu::Stream stream, IbNetwork& network,
    braid::sockets::Socket connected, int peer, int64_t timeoutMs, const std::string& nic,
    const GdrChoice& gdr) {
  BRAID_ASSIGN_OR_RETURN(GpuIbFifo made,
                         makeFifo(runtime, name, slotBytes, proxyCursor, stream, gdr.place));
  const SlotMemory memory = slotMemory(made, gdr);
  auto end = std::make_unique<GpuIbSendEnd>(std::move(made.fifo), cursor);
  BRAID_ASSIGN_OR_RETURN(std::unique_ptr<IbSendPump> pump,
                         IbSendPump::start(network, end->fifoRef(), std::move(connected), peer,
                                           timeoutMs, nic, memory));
  end->setPump(std::move(pump));
  return std::unique_ptr<cuda_ipc::GpuSendEnd>(std::move(end));
}

Result<std::unique_ptr<cuda_ipc::GpuRecvEnd>> openGpuIbRecvEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes, engine::FifoCursor* cursor,
    gpu::Stream stream, IbNetwork& network, IbRecvPump::SocketTaker take, int peer,
    int64_t timeoutMs, const std::string& nic, const GdrChoice& gdr) {
  BRAID_ASSIGN_OR_RETURN(GpuIbFifo made,
                         makeFifo(runtime, name, slotBytes, cursor, stream, gdr.place));
  const SlotMemory memory = slotMemory(made, gdr);
  auto end = std::make_unique<GpuIbRecvEnd>(std::move(made.fifo));
  BRAID_ASSIGN_OR_RETURN(
      std::unique_ptr<IbRecvPump> pump,
      IbRecvPump::start(network, end->fifoRef(), std::move(take), peer, timeoutMs, nic, memory));
  end->setPump(std::move(pump));
  return std::unique_ptr<cuda_ipc::GpuRecvEnd>(std::move(end));
}

}  // namespace braid::transport::ib
