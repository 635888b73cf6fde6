// A GPU rank's verbs FIFO end with GPUDirect RDMA (transport/net/ib/gpu_ib_fifo.h), on the
// emulated GPU and the emulated HCA: a receiving end in device memory registers its slots by
// dmabuf and sets up its flush; a dmabuf the HCA refuses fails the end with an error that names
// the call, its reason and the way out.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/runtime.h"
#include "transport/net/ib/gpu_ib_fifo.h"
#include "transport/net/ib/ib_network.h"

namespace braid::transport::ib {
namespace {

constexpr size_t kSlotBytes = 4096;

/// An IbNetwork on one emulated device.
std::unique_ptr<IbNetwork> emulatedNetwork() {
  IbSettings settings;
  settings.emulate = 1;
  std::string why;
  Result<std::unique_ptr<IbNetwork>> network = IbNetwork::open(settings, 0, &why);
  EXPECT_TRUE(network.ok()) << network.status().message();
  EXPECT_TRUE(network.ok() && network.value() != nullptr) << why;
  return network.ok() ? std::move(network).value() : nullptr;
}

/// A sender that never comes: the end waits for it (and is destroyed first).
IbRecvPump::SocketTaker nobody() {
  return []() -> std::optional<braid::sockets::Socket> { return std::nullopt; };
}

TEST(GpuIbFifoGdr, AReceiverInDeviceMemoryRegistersItsSlotsByDmabuf) {
  std::unique_ptr<IbNetwork> network = emulatedNetwork();
  ASSERT_NE(network, nullptr);
  std::unique_ptr<gpu::Runtime> gpu = gpu::makeEmulatedRuntime(1);
  Result<void*> cursor = gpu->deviceAlloc(sizeof(kernels::engine::FifoCursor));
  ASSERT_TRUE(cursor.ok());
  GdrChoice gdr;
  gdr.place = SlotPlace::kDmabuf;
  gdr.flush = true;
  auto end = openGpuIbRecvEnd(*gpu, "gdr-test", kSlotBytes,
                              static_cast<kernels::engine::FifoCursor*>(cursor.value()), nullptr,
                              *network, nobody(), 1, 10000, "", gdr);
  ASSERT_TRUE(end.ok()) << end.status().message();
  EXPECT_EQ(end.value()->placement(), cuda_ipc::FifoPlacement::kDeviceMemory);
  const kernels::engine::FifoRef fifo = end.value()->end().fifo;
  Result<gpu::PointerInfo> slots = gpu->pointerInfo(fifo.slots);
  ASSERT_TRUE(slots.ok());
  EXPECT_EQ(slots.value().kind, gpu::MemoryKind::kDevice);
  Result<gpu::PointerInfo> counters = gpu->pointerInfo(fifo.counters);
  ASSERT_TRUE(counters.ok());
  EXPECT_EQ(counters.value().kind, gpu::MemoryKind::kPinnedHost) << "the proxy polls them";
  end.value().reset();
  EXPECT_TRUE(gpu->deviceFree(cursor.value()).ok());
}

TEST(GpuIbFifoGdr, ADmabufTheHcaRefusesFailsTheEndNamingWhy) {
  std::unique_ptr<IbNetwork> network = emulatedNetwork();
  ASSERT_NE(network, nullptr);
  std::vector<char> slots(kernels::engine::kFifoSlots * kSlotBytes + 4096);
  kernels::engine::FifoCounters counters{};
  kernels::engine::FifoRef fifo{&counters, slots.data(), kSlotBytes,
                                static_cast<uint32_t>(kSlotBytes)};
  // A descriptor of a file that no GPU exported: the kernel (and the emulated HCA) say EINVAL.
  const int notDmabuf = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
  ASSERT_GE(notDmabuf, 0);
  SlotMemory memory;
  memory.place = SlotPlace::kDmabuf;
  memory.dmabufFd = notDmabuf;
  auto pump = IbRecvPump::start(*network, fifo, nobody(), 1, 10000, "", memory);
  close(notDmabuf);
  ASSERT_FALSE(pump.ok());
  const std::string& why = pump.status().message();
  EXPECT_NE(why.find("ibv_reg_dmabuf_mr: Invalid argument"), std::string::npos) << why;
  EXPECT_NE(why.find("emu_0:1"), std::string::npos) << why;
  EXPECT_NE(why.find("NCCL_DMABUF_ENABLE=0"), std::string::npos) << why;
}

}  // namespace
}  // namespace braid::transport::ib
