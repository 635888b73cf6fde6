// GPUDirect RDMA on the emulators: the emulated GPU's dmabuf exports of device memory
// (emulation/gpu/emulated_dmabuf.h) registered with the emulated HCA by ibv_reg_dmabuf_mr, RDMA
// writes landing in device memory through them, everything the kernel and CUDA refuse refused
// alike; and the emulated HCA's RDMA reads (the transport's flush), with their access checks.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "gpu/runtime.h"
#include "support/emulated_verbs.h"

namespace braid::transport::ib::verbs_test {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kDeviceBytes = 2 * kPage;

/// Two pages of an emulated GPU's memory, exported as a dmabuf, and two endpoints on emu_0.
class VerbsEmulationDmabuf : public VerbsEmulationWrite {
 protected:
  void SetUp() override {
    VerbsEmulationWrite::SetUp();
    Result<void*> memory = gpu_->deviceAlloc(kDeviceBytes);
    ASSERT_TRUE(memory.ok()) << memory.status().message();
    device_ = memory.value();
    std::memset(device_, 0, kDeviceBytes);  // the emulated GPU's memory is the host's
    Result<int> fd = gpu_->exportDmabuf(device_, kDeviceBytes);
    ASSERT_TRUE(fd.ok()) << fd.status().message();
    fd_ = fd.value();
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
    if (device_ != nullptr) EXPECT_TRUE(gpu_->deviceFree(device_).ok());
  }
  uint64_t iova(size_t offset = 0) const { return reinterpret_cast<uintptr_t>(device_) + offset; }
  ibv_mr* reg(uint64_t offset, size_t length, uint64_t iova, int fd) {
    return verbs().regDmabufMr(b_.pd, offset, length, iova, fd, kRw | IBV_ACCESS_REMOTE_READ);
  }

  std::unique_ptr<gpu::Runtime> gpu_ = gpu::makeEmulatedRuntime(1);
  void* device_ = nullptr;
  int fd_ = -1;
};

TEST_F(VerbsEmulationDmabuf, AWriteLandsInDeviceMemoryThroughTheRegistration) {
  ibv_mr* mr = reg(0, kDeviceBytes, iova(), fd_);
  ASSERT_NE(mr, nullptr) << std::strerror(errno);
  EXPECT_EQ(mr->addr, device_);
  EXPECT_EQ(mr->length, kDeviceBytes);
  close(fd_);  // the registration keeps its own reference, as a kernel's does
  fd_ = -1;
  connect();
  for (size_t i = 0; i < 64; ++i) a_.memory[i] = static_cast<uint8_t>(i + 1);
  Write w = aToB(0, 64);
  w.remote = iova(kPage + 100);
  w.rkey = mr->rkey;
  ASSERT_EQ(post(a_.qp, w), 0);
  auto wc = pollFor(a_.sendCq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(static_cast<uint8_t*>(device_) + kPage + 100, a_.memory.data(), 64), 0);
  EXPECT_EQ(std::vector<uint8_t>(b_.memory.size(), 0), b_.memory) << "nothing in host memory";
  EXPECT_EQ(verbs().deregMr(mr), 0);
}

TEST_F(VerbsEmulationDmabuf, ASecondPageAloneIsAddressedAtItsOwnIova) {
  ibv_mr* mr = reg(kPage, kPage, iova(kPage), fd_);
  ASSERT_NE(mr, nullptr) << std::strerror(errno);
  connect();
  a_.memory[0] = 0x5a;
  Write w = aToB(0, 1);
  w.remote = iova(kPage);
  w.rkey = mr->rkey;
  ASSERT_EQ(post(a_.qp, w), 0);
  auto wc = pollFor(a_.sendCq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(static_cast<uint8_t*>(device_)[kPage], 0x5a);
  EXPECT_EQ(verbs().deregMr(mr), 0);
}

TEST_F(VerbsEmulationDmabuf, RefusesWhatTheKernelRefuses) {
  // Not a descriptor at all, or one closed: EBADF (NCCL's probe of dmabuf support relies on it).
  errno = 0;
  EXPECT_EQ(reg(0, kDeviceBytes, iova(), -1), nullptr);
  EXPECT_EQ(errno, EBADF);
  const int closed = dup(fd_);
  close(closed);
  errno = 0;
  EXPECT_EQ(reg(0, kDeviceBytes, iova(), closed), nullptr);
  EXPECT_EQ(errno, EBADF);
  // A descriptor of something that is no dmabuf: EINVAL.
  const int plain = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
  ASSERT_GE(plain, 0);
  ASSERT_EQ(ftruncate(plain, kDeviceBytes), 0);
  errno = 0;
  EXPECT_EQ(reg(0, kDeviceBytes, iova(), plain), nullptr);
  EXPECT_EQ(errno, EINVAL);
  close(plain);
  // Past the export's end, empty, or an iova whose place in its page is not the offset's.
  for (auto [offset, length, at] : {std::tuple<uint64_t, size_t, uint64_t>{0, kDeviceBytes + 1, 0},
                                    {kPage, kDeviceBytes, kPage},
                                    {0, 0, 0},
                                    {16, 64, 32}}) {
    errno = 0;
    EXPECT_EQ(reg(offset, length, iova(at), fd_), nullptr) << offset << " " << length;
    EXPECT_EQ(errno, EINVAL) << offset << " " << length;
  }
}

TEST(EmulatedGpuDmabuf, ExportsOnlyWholePagesOfOneDeviceAllocation) {
  std::unique_ptr<gpu::Runtime> gpu = gpu::makeEmulatedRuntime(1);
  Result<void*> memory = gpu->deviceAlloc(kDeviceBytes);
  ASSERT_TRUE(memory.ok());
  auto* base = static_cast<char*>(memory.value());
  EXPECT_TRUE(gpu->dmabufSupported(0));
  EXPECT_FALSE(gpu->dmabufSupported(1)) << "no such device";
  Result<void*> host = gpu->hostAlloc(kPage);
  ASSERT_TRUE(host.ok());
  for (auto [pointer, bytes] : {std::pair<void*, size_t>{base + 8, kPage},
                                {base, kPage + 1},
                                {base, 0},
                                {base + kPage, kDeviceBytes},
                                {host.value(), kPage}}) {
    Result<int> fd = gpu->exportDmabuf(pointer, bytes);
    ASSERT_FALSE(fd.ok()) << bytes;
    EXPECT_NE(fd.status().message().find("dmabuf"), std::string::npos) << fd.status().message();
  }
  EXPECT_TRUE(gpu->hostFree(host.value()).ok());
  EXPECT_TRUE(gpu->deviceFree(base).ok());
}

TEST(EmulatedGpuDmabuf, AGpuModelledWithoutDmabufRefusesToExport) {
  gpu::EmulatedShape shape;
  shape.dmabuf = false;
  std::unique_ptr<gpu::Runtime> gpu = gpu::makeEmulatedRuntime(shape);
  EXPECT_FALSE(gpu->dmabufSupported(0));
  Result<void*> memory = gpu->deviceAlloc(kPage);
  ASSERT_TRUE(memory.ok());
  Result<int> fd = gpu->exportDmabuf(memory.value(), kPage);
  ASSERT_FALSE(fd.ok());
  EXPECT_NE(fd.status().message().find("cuMemGetHandleForAddressRange"), std::string::npos);
  EXPECT_TRUE(gpu->deviceFree(memory.value()).ok());
}

/// An RDMA read of `length` bytes of b's buffer at `from` into a's at `to`.
int postRead(const Endpoint& a, size_t to, const Endpoint& b, size_t from, uint32_t length) {
  ibv_sge sge{a.addr(to), length, a.mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 7;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = b.addr(from);
  wr.wr.rdma.rkey = b.mr->rkey;
  ibv_send_wr* bad = nullptr;
  return verbs().postSend(a.qp, &wr, &bad);
}

constexpr int kRwr = kRw | IBV_ACCESS_REMOTE_READ;

TEST(VerbsEmulationRead, ARemoteReadBringsTheBytesAndCompletesAsARead) {
  Device device;
  Endpoint a(device.context, {4096, kRwr, kRwr});
  Endpoint b(device.context, {4096, kRwr, kRwr});
  ASSERT_TRUE(a.ok() && b.ok());
  connectPair(a, b);
  for (size_t i = 0; i < 32; ++i) b.memory[200 + i] = static_cast<uint8_t>(0xa0 + i);
  ASSERT_EQ(postRead(a, 8, b, 200, 32), 0);
  auto wc = pollFor(a.sendCq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc[0].opcode, IBV_WC_RDMA_READ);
  EXPECT_EQ(wc[0].byte_len, 32u);
  EXPECT_EQ(std::memcmp(a.memory.data() + 8, b.memory.data() + 200, 32), 0);
  // Larger than the emulation carries: refused at the post.
  EXPECT_EQ(postRead(a, 0, b, 0, 4097), EINVAL);
}

TEST(VerbsEmulationRead, ARegionWithoutRemoteReadRefusesIt) {
  Device device;
  Endpoint a(device.context, {4096, kRwr, kRwr});
  Endpoint b(device.context, {4096, kRw, kRwr});  // its memory: no remote reads
  ASSERT_TRUE(a.ok() && b.ok());
  connectPair(a, b);
  ASSERT_EQ(postRead(a, 0, b, 0, 16), 0);
  auto wc = pollFor(a.sendCq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(stateOf(a.qp), IBV_QPS_ERR);
}

}  // namespace
}  // namespace braid::transport::ib::verbs_test
