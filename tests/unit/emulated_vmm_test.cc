// The emulated GPU's shareable memory (emulation/gpu/emulated_vmm.h) models CUDA's: sizes round
// up to the granularity; an exported handle is a file descriptor, whose number means nothing in
// another process until the descriptor is passed there (SCM_RIGHTS, base/fd_passing.h), where
// importing it maps the same memory at a new address; a peer's mapping outlives the peer's
// free; cudaMalloc'd memory is not shareable, and neither is a range leaving its allocation.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "base/fd_passing.h"
#include "gpu/runtime.h"

namespace braid {
namespace {

using gpu::Runtime;

constexpr size_t kGranularity = size_t{2} << 20;

TEST(EmulatedVmm, RoundsToTheGranularityAndReportsItsRange) {
  auto rt = gpu::makeEmulatedRuntime(2);
  ASSERT_TRUE(rt->vmmSupported(0));
  EXPECT_FALSE(rt->vmmSupported(2));
  auto p = rt->vmmAlloc(12345);
  ASSERT_TRUE(p.ok()) << p.status().message();
  char* base = static_cast<char*>(p.value());
  auto inside = rt->vmmRange(base + 100, 1000);
  ASSERT_TRUE(inside.ok()) << inside.status().message();
  EXPECT_EQ(inside.value().base, base);
  EXPECT_EQ(inside.value().bytes, kGranularity);
  // Device memory, as cudaPointerGetAttributes says of cuMem memory.
  auto info = rt->pointerInfo(base + 5);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info.value().kind, gpu::MemoryKind::kDevice);
  EXPECT_EQ(info.value().device, 0);
  // A range that leaves the allocation is refused.
  auto leaving = rt->vmmRange(base + kGranularity - 8, 16);
  EXPECT_FALSE(leaving.ok());
  EXPECT_NE(leaving.status().message().find("leave the shareable allocation"), std::string::npos);
  EXPECT_TRUE(rt->vmmFree(base).ok());
  EXPECT_FALSE(rt->vmmFree(base).ok()) << "freed twice";
}

TEST(EmulatedVmm, CudaMallocdMemoryIsNotShareable) {
  auto rt = gpu::makeEmulatedRuntime(1);
  auto legacy = rt->deviceAlloc(4096);
  ASSERT_TRUE(legacy.ok());
  auto range = rt->vmmRange(legacy.value(), 16);
  EXPECT_FALSE(range.ok());
  EXPECT_EQ(range.status().code(), ErrorCode::kCudaError);
  EXPECT_NE(range.status().message().find("not shareable device memory"), std::string::npos);
  EXPECT_FALSE(rt->vmmExport(legacy.value()).ok());
  std::vector<char> host(64);
  EXPECT_FALSE(rt->vmmRange(host.data(), 8).ok());
  EXPECT_TRUE(rt->deviceFree(legacy.value()).ok());
}

TEST(EmulatedVmm, AnImportInThisProcessIsANewAddressOfTheSameMemory) {
  auto rt = gpu::makeEmulatedRuntime(1);
  auto p = rt->vmmAlloc(4096);
  ASSERT_TRUE(p.ok());
  auto fd = rt->vmmExport(p.value());
  ASSERT_TRUE(fd.ok()) << fd.status().message();
  auto mapped = rt->vmmImport(fd.value(), kGranularity);
  close(fd.value());  // the import keeps what it needs
  ASSERT_TRUE(mapped.ok()) << mapped.status().message();
  EXPECT_NE(mapped.value(), p.value());
  strcpy(static_cast<char*>(p.value()), "written through the allocation");
  EXPECT_STREQ(static_cast<char*>(mapped.value()), "written through the allocation");
  // The memory lives while mapped, after its allocation is freed.
  ASSERT_TRUE(rt->vmmFree(p.value()).ok());
  EXPECT_STREQ(static_cast<char*>(mapped.value()), "written through the allocation");
  EXPECT_TRUE(rt->vmmUnmap(mapped.value()).ok());
  EXPECT_FALSE(rt->vmmUnmap(mapped.value()).ok()) << "unmapped twice";
}

TEST(EmulatedVmm, ImportRefusesWhatIsNoHandleAndAWrongSize) {
  auto rt = gpu::makeEmulatedRuntime(1);
  int pipeFds[2];
  ASSERT_EQ(pipe(pipeFds), 0);
  auto notHandle = rt->vmmImport(pipeFds[0], kGranularity);
  EXPECT_FALSE(notHandle.ok());
  EXPECT_NE(notHandle.status().message().find("not a shareable handle"), std::string::npos);
  close(pipeFds[0]);
  close(pipeFds[1]);
  auto p = rt->vmmAlloc(1);
  ASSERT_TRUE(p.ok());
  auto fd = rt->vmmExport(p.value());
  ASSERT_TRUE(fd.ok());
  EXPECT_FALSE(rt->vmmImport(fd.value(), 2 * kGranularity).ok());
  close(fd.value());
  EXPECT_TRUE(rt->vmmFree(p.value()).ok());
}

// A child process given the handle's number alone cannot map it; given the descriptor over a
// Unix socket it maps the parent's memory, and the parent sees what the child writes.
TEST(EmulatedVmm, AHandleMeansSomethingInAnotherProcessOnlyOncePassedThere) {
  auto rt = gpu::makeEmulatedRuntime(1);
  auto p = rt->vmmAlloc(4096);
  ASSERT_TRUE(p.ok());
  strcpy(static_cast<char*>(p.value()), "parent");
  auto listener = sockets::FdListener::open(1);
  ASSERT_TRUE(listener.ok()) << listener.status().message();
  auto fd = rt->vmmExport(p.value());
  ASSERT_TRUE(fd.ok());
  const int number = fd.value();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto own = gpu::makeEmulatedRuntime(1);
    // The number names nothing of the child's (its inherited copy is closed first, as a process
    // that did not fork from its peer never had one).
    close(number);
    if (own->vmmImport(number, kGranularity).ok()) _exit(2);
    auto s = sockets::connectFdListener(listener.value().name());
    if (!s.ok()) _exit(3);
    auto got = sockets::recvFd(s.value(), Deadline::afterMs(10000));
    if (!got.ok() || got.value().word != 77) _exit(4);
    auto mapped = own->vmmImport(got.value().fd, kGranularity);
    if (!mapped.ok() || strcmp(static_cast<char*>(mapped.value()), "parent") != 0) _exit(5);
    strcpy(static_cast<char*>(mapped.value()), "child");
    _exit(0);
  }
  auto peer = listener.value().accept(Deadline::afterMs(10000));
  ASSERT_TRUE(peer.ok()) << peer.status().message();
  ASSERT_TRUE(sockets::sendFd(peer.value(), number, 77).ok());
  close(number);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the bare number mapped; 3-5: passing failed";
  EXPECT_STREQ(static_cast<char*>(p.value()), "child");
  EXPECT_TRUE(rt->vmmFree(p.value()).ok());
}

TEST(FdPassing, ReceivingGivesUpAtTheDeadlineAndOnAClosedPeer) {
  auto listener = sockets::FdListener::open(1);
  ASSERT_TRUE(listener.ok());
  EXPECT_FALSE(listener.value().accept(Deadline::afterMs(50)).ok());
  auto s = sockets::connectFdListener(listener.value().name());
  ASSERT_TRUE(s.ok());
  auto peer = listener.value().accept(Deadline::afterMs(5000));
  ASSERT_TRUE(peer.ok());
  auto silent = sockets::recvFd(s.value(), Deadline::afterMs(50));
  EXPECT_FALSE(silent.ok());
  EXPECT_NE(silent.status().message().find("timed out"), std::string::npos);
  peer.value().close();
  auto closed = sockets::recvFd(s.value(), Deadline::afterMs(5000));
  EXPECT_FALSE(closed.ok());
  EXPECT_NE(closed.status().message().find("closed the connection"), std::string::npos);
  EXPECT_FALSE(sockets::connectFdListener("braid-fd-no-such-listener").ok());
}

}  // namespace
}  // namespace braid
