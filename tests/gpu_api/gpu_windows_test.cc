// Symmetric memory windows on GPU communicators (ncclCommWindowRegister; src/comm/windows.h,
// docs/symmetric-memory.md): ranks as threads of one process and as forked processes, 2 and 4
// of them, a GPU each or two on one GPU. Every rank writes a pattern of its own into a buffer
// from ncclMemAlloc, registers it, and reads every rank's buffer through the pointers its window
// gives (ncclGetLsaDevicePointer, ncclGetPeerDevicePointer, and the lsaBases table of the struct
// the handle points to), and a store through a peer's pointer lands in the peer's own buffer.
// Then what declines or fails as NCCL 2.30.7 does: cudaMalloc'd buffers fail, a communicator
// spanning two hosts makes no window (NULL); and every bad argument gets its error. Built for the
// emulated GPU (label emulated-gpu) and a real one (gpu).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "gpu_api/gpu_cases.h"
#include "nccl_device/window_layout.h"

extern "C" {
// NCCL 2.30's host pointer queries of a window (nccl_device/core.h in NVIDIA's headers).
struct ncclMultimemHandle {
  void* mcBasePtr;
};
ncclResult_t ncclGetLsaDevicePointer(ncclWindow_t window, size_t offset, int lsaRank,
                                     void** outPtr);
ncclResult_t ncclGetPeerDevicePointer(ncclWindow_t window, size_t offset, int peer, void** outPtr);
ncclResult_t ncclGetLsaMultimemDevicePointer(ncclWindow_t window, size_t offset, void** outPtr);
ncclResult_t ncclGetMultimemDevicePointer(ncclWindow_t window, size_t offset,
                                          struct ncclMultimemHandle multimem, void** outPtr);
}

namespace {

using braid::testing::failsWith;
using braid::testing::runProcesses;
using braid::testing::gpu::deviceApi;
using braid::testing::gpu::devicesFor;
using braid::testing::gpu::GpuRanks;

constexpr size_t kWords = 3000;  // 12000 bytes: not a multiple of any granularity
constexpr size_t kBytes = kWords * sizeof(uint32_t);

uint32_t patternOf(int rank, size_t i) {
  return 0x9e370000u + static_cast<uint32_t>(rank) * 7919u + static_cast<uint32_t>(i);
}

/// `bytes` at `device` (device memory) read back on `stream`.
std::vector<uint32_t> readWords(const void* device, size_t words, cudaStream_t stream) {
  std::vector<uint32_t> out(words);
  EXPECT_EQ(deviceApi()->copy(out.data(), device, words * sizeof(uint32_t), stream), ncclSuccess);
  EXPECT_EQ(deviceApi()->streamSynchronize(stream), ncclSuccess);
  return out;
}

/// A buffer from ncclMemAlloc holding rank `rank`'s pattern.
void* patterned(int rank, cudaStream_t stream) {
  void* buffer = nullptr;
  EXPECT_EQ(ncclMemAlloc(&buffer, kBytes), ncclSuccess) << ncclGetLastError(nullptr);
  std::vector<uint32_t> words(kWords);
  for (size_t i = 0; i < kWords; ++i) words[i] = patternOf(rank, i);
  EXPECT_EQ(deviceApi()->copy(buffer, words.data(), kBytes, stream), ncclSuccess);
  EXPECT_EQ(deviceApi()->streamSynchronize(stream), ncclSuccess);
  return buffer;
}

/// Checks, on rank `rank` of `nranks` with window `win` over `buffer`, every way a rank's buffer
/// is reached: the user pointer, the LSA and peer pointers, the struct and its table; each
/// rank's pattern read through them.
void checkWindow(ncclComm_t comm, ncclWindow_t win, void* buffer, int rank, int nranks,
                 cudaStream_t stream) {
  ASSERT_NE(win, nullptr);
  void* user = nullptr;
  ASSERT_EQ(ncclWinGetUserPtr(comm, win, &user), ncclSuccess) << ncclGetLastError(comm);
  EXPECT_EQ(user, buffer);
  ncclWindow_vidmem w{};
  ASSERT_EQ(deviceApi()->copy(&w, win, sizeof(w), stream), ncclSuccess);
  ASSERT_EQ(deviceApi()->streamSynchronize(stream), ncclSuccess);
  EXPECT_EQ(w.magic, BRAID_WINDOW_MAGIC);
  EXPECT_EQ(w.worldRank, rank);
  EXPECT_EQ(w.worldSize, nranks);
  EXPECT_EQ(w.lsaRank, rank);
  EXPECT_EQ(w.lsaSize, nranks);
  EXPECT_EQ(w.lsaFirstWorldRank, 0);
  EXPECT_EQ(w.size, kBytes);
  EXPECT_EQ(w.localBase, buffer);
  std::vector<char*> table(nranks);
  ASSERT_EQ(deviceApi()->copy(table.data(), w.lsaBases, nranks * sizeof(char*), stream),
            ncclSuccess);
  ASSERT_EQ(deviceApi()->streamSynchronize(stream), ncclSuccess);
  EXPECT_EQ(table[rank], buffer);
  for (int p = 0; p < nranks; ++p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + " reading rank " + std::to_string(p));
    void* lsa = nullptr;
    ASSERT_EQ(ncclGetLsaDevicePointer(win, 0, p, &lsa), ncclSuccess) << ncclGetLastError(nullptr);
    EXPECT_EQ(lsa, table[p]);
    void* peer = nullptr;
    const size_t offset = 4 * 100;
    ASSERT_EQ(ncclGetPeerDevicePointer(win, offset, p, &peer), ncclSuccess);
    EXPECT_EQ(peer, static_cast<char*>(lsa) + offset);
    const std::vector<uint32_t> seen = readWords(lsa, kWords, stream);
    std::vector<uint32_t> expected(kWords);
    for (size_t i = 0; i < kWords; ++i) expected[i] = patternOf(p, i);
    EXPECT_EQ(seen, expected);
  }
}

/// A store into rank `to`'s buffer through `win`'s pointer, at word `rank` of its last words.
void storeIntoPeer(ncclWindow_t win, int rank, int to, cudaStream_t stream) {
  void* at = nullptr;
  const size_t offset = (kWords - 64 + rank) * sizeof(uint32_t);
  ASSERT_EQ(ncclGetLsaDevicePointer(win, offset, to, &at), ncclSuccess);
  const uint32_t mark = 0xabc00000u + static_cast<uint32_t>(rank);
  ASSERT_EQ(deviceApi()->copy(at, &mark, sizeof(mark), stream), ncclSuccess);
  ASSERT_EQ(deviceApi()->streamSynchronize(stream), ncclSuccess);
}

/// Deregisters `win` and checks that it is gone: every use of it then an error.
void deregisterAndCheckGone(ncclComm_t comm, ncclWindow_t win) {
  ASSERT_EQ(ncclCommWindowDeregister(comm, win), ncclSuccess) << ncclGetLastError(comm);
  void* p = nullptr;
  EXPECT_TRUE(failsWith([&] { return ncclGetLsaDevicePointer(win, 0, 0, &p); }, ncclInvalidArgument,
                        {"ncclGetLsaDevicePointer", "not a live window"}));
  EXPECT_TRUE(failsWith([&] { return ncclWinGetUserPtr(comm, win, &p); }, ncclInvalidArgument,
                        {"ncclWinGetUserPtr", "deregistered already"}, comm));
  EXPECT_TRUE(failsWith([&] { return ncclCommWindowDeregister(comm, win); }, ncclInvalidArgument,
                        {"ncclCommWindowDeregister", "deregistered already"}, comm));
}

/// A patterned buffer from ncclMemAlloc on every rank of `g`, registered as windows in one group
/// from this thread, as NCCL's ranks-as-threads programs do.
struct GroupWindows {
  GroupWindows(const GpuRanks& g, int flags) : buffers(g.size()), wins(g.size(), nullptr) {
    for (int r = 0; r < g.size(); ++r) {
      deviceApi()->setDevice(g.device(r));
      buffers[r] = patterned(r, g.stream(r));
    }
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < g.size(); ++r) {
      EXPECT_EQ(ncclCommWindowRegister(g.comm(r), buffers[r], kBytes, &wins[r], flags),
                ncclSuccess);
    }
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  }
  /// Deregisters the windows and frees the buffers.
  void release(const GpuRanks& g) {
    for (int r = 0; r < g.size(); ++r) {
      EXPECT_EQ(ncclCommWindowDeregister(g.comm(r), wins[r]), ncclSuccess);
      EXPECT_EQ(ncclMemFree(buffers[r]), ncclSuccess);
    }
  }
  std::vector<void*> buffers;
  std::vector<ncclWindow_t> wins;
};

class GpuWindows : public ::testing::TestWithParam<std::pair<int, int>> {
 protected:
  void SetUp() override { BRAID_REQUIRE_GPU(); }
  int nranks() const { return GetParam().first; }
  int perDevice() const { return GetParam().second; }
};

// Ranks as threads of one process, registering in one group from one thread as with NCCL.
TEST_P(GpuWindows, ThreadRanksReadEveryPeerThroughTheirWindows) {
  GpuRanks g(devicesFor(nranks(), perDevice()));
  ASSERT_TRUE(g.ok());
  const int n = g.size();
  GroupWindows made(g, NCCL_WIN_COLL_SYMMETRIC);
  const std::vector<void*>& buffers = made.buffers;
  const std::vector<ncclWindow_t>& wins = made.wins;
  if (::testing::Test::HasFailure()) return;
  for (int r = 0; r < n; ++r) {
    deviceApi()->setDevice(g.device(r));
    checkWindow(g.comm(r), wins[r], buffers[r], r, n, g.stream(r));
  }
  // Each rank stores a mark into the next rank's buffer through its window.
  for (int r = 0; r < n; ++r) {
    deviceApi()->setDevice(g.device(r));
    storeIntoPeer(wins[r], r, (r + 1) % n, g.stream(r));
  }
  for (int r = 0; r < n; ++r) {
    deviceApi()->setDevice(g.device(r));
    const int from = (r + n - 1) % n;
    const std::vector<uint32_t> seen = readWords(buffers[r], kWords, g.stream(r));
    EXPECT_EQ(seen[kWords - 64 + from], 0xabc00000u + static_cast<uint32_t>(from));
  }
  for (int r = 0; r < n; ++r) deregisterAndCheckGone(g.comm(r), wins[r]);
  for (int r = 0; r < n; ++r) EXPECT_EQ(ncclMemFree(buffers[r]), ncclSuccess);
}

// Ranks as processes: the handles cross processes as file descriptors (SCM_RIGHTS).
TEST_P(GpuWindows, ProcessRanksReadEveryPeerThroughTheirWindows) {
  const int n = nranks();
  const std::vector<int> devices = devicesFor(n, perDevice());
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  runProcesses(n, [&](int rank) {
    ASSERT_EQ(deviceApi()->setDevice(devices[rank]), ncclSuccess);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(deviceApi()->streamCreate(&stream), ncclSuccess);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, n, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    void* buffer = patterned(rank, stream);
    ncclWindow_t win = nullptr;
    ASSERT_EQ(ncclCommWindowRegister(comm, buffer, kBytes, &win, NCCL_WIN_DEFAULT), ncclSuccess)
        << ncclGetLastError(comm);
    void* word = nullptr;
    ASSERT_EQ(deviceApi()->alloc(&word, sizeof(float)), ncclSuccess);
    // An all-reduce as a barrier between the ranks' steps.
    const auto barrier = [&] {
      ASSERT_EQ(ncclAllReduce(word, word, 1, ncclFloat, ncclSum, comm, stream), ncclSuccess);
      ASSERT_EQ(deviceApi()->streamSynchronize(stream), ncclSuccess);
    };
    checkWindow(comm, win, buffer, rank, n, stream);
    if (::testing::Test::HasFailure()) return;
    barrier();  // every rank has read every pattern before any store
    storeIntoPeer(win, rank, (rank + 1) % n, stream);
    barrier();  // every store is made before any rank looks
    const int from = (rank + n - 1) % n;
    EXPECT_EQ(readWords(buffer, kWords, stream)[kWords - 64 + from],
              0xabc00000u + static_cast<uint32_t>(from));
    barrier();  // no rank unmaps a buffer another may still read
    deregisterAndCheckGone(comm, win);
    EXPECT_EQ(ncclMemFree(buffer), ncclSuccess);
    deviceApi()->release(word);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
    deviceApi()->streamDestroy(stream);
  });
}

INSTANTIATE_TEST_SUITE_P(RanksAndGpus, GpuWindows,
                         ::testing::Values(std::make_pair(2, 0), std::make_pair(4, 0),
                                           std::make_pair(2, 2), std::make_pair(4, 2)),
                         [](const auto& info) {
                           return std::to_string(info.param.first) + "Ranks" +
                                  (info.param.second == 0 ? "AGpuEach" : "TwoPerGpu");
                         });

class GpuWindowsDecline : public ::testing::Test {
 protected:
  void SetUp() override { BRAID_REQUIRE_GPU(); }
};

// cudaMalloc'd memory cannot be mapped by the other ranks: the registration fails on every rank
// as NCCL 2.30.7's does for it (ncclUnhandledCudaError), the window NULL, never a hang; a rank
// whose own buffer was shareable hears which rank's was not.
TEST_F(GpuWindowsDecline, CudaMallocBuffersFailAsWithNccl) {
  GpuRanks g(devicesFor(2));
  ASSERT_TRUE(g.ok());
  for (const bool mixed : {false, true}) {
    SCOPED_TRACE(mixed ? "rank 0 from ncclMemAlloc, rank 1 cudaMalloc'd" : "both cudaMalloc'd");
    std::vector<void*> buffers(2);
    std::vector<ncclWindow_t> wins(2);
    for (int r = 0; r < 2; ++r) {
      deviceApi()->setDevice(g.device(r));
      if (mixed && r == 0) {
        ASSERT_EQ(ncclMemAlloc(&buffers[r], kBytes), ncclSuccess);
      } else {
        ASSERT_EQ(deviceApi()->alloc(&buffers[r], kBytes), ncclSuccess);
      }
      wins[r] = reinterpret_cast<ncclWindow_t>(&buffers);  // not NULL before the call
    }
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < 2; ++r) {
      ASSERT_EQ(ncclCommWindowRegister(g.comm(r), buffers[r], kBytes, &wins[r], 0), ncclSuccess);
    }
    EXPECT_EQ(ncclGroupEnd(), ncclUnhandledCudaError);
    const std::string text = ncclGetLastError(nullptr);
    EXPECT_NE(text.find("not shareable device memory"), std::string::npos) << text;
    for (int r = 0; r < 2; ++r) EXPECT_EQ(wins[r], nullptr);
    for (int r = 0; r < 2; ++r) {
      if (mixed && r == 0) {
        EXPECT_EQ(ncclMemFree(buffers[r]), ncclSuccess);
      } else {
        EXPECT_EQ(deviceApi()->release(buffers[r]), ncclSuccess);
      }
    }
  }
  // Neither failure broke the communicators: a window of shareable memory is made after them.
  GroupWindows made(g, 0);
  for (int r = 0; r < 2; ++r) EXPECT_NE(made.wins[r], nullptr);
  made.release(g);
}

// A communicator spanning two hosts (BRAID_HOSTID) has a load/store team smaller than itself:
// it makes no window, as NCCL's without symmetric support (success, NULL, a NULL user pointer).
TEST_F(GpuWindowsDecline, TwoHostCommunicatorMakesNoWindow) {
  const std::vector<int> devices = devicesFor(2);
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  runProcesses(2, [&](int rank) {
    setenv("BRAID_HOSTID", rank == 0 ? "windows-host-a" : "windows-host-b", 1);
    setenv("BRAID_NET", "Socket", 1);
    ASSERT_EQ(deviceApi()->setDevice(devices[rank]), ncclSuccess);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, 2, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    void* buffer = nullptr;
    ASSERT_EQ(ncclMemAlloc(&buffer, kBytes), ncclSuccess);
    ncclWindow_t win = reinterpret_cast<ncclWindow_t>(&buffer);
    ASSERT_EQ(ncclCommWindowRegister(comm, buffer, kBytes, &win, NCCL_WIN_COLL_SYMMETRIC),
              ncclSuccess)
        << ncclGetLastError(comm);
    EXPECT_EQ(win, nullptr);
    void* user = &buffer;
    EXPECT_EQ(ncclWinGetUserPtr(comm, win, &user), ncclSuccess);
    EXPECT_EQ(user, nullptr);
    EXPECT_EQ(ncclCommWindowDeregister(comm, win), ncclSuccess);
    EXPECT_EQ(ncclMemFree(buffer), ncclSuccess);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

// Every bad argument of the window calls and the pointer queries gets its error, naming it.
TEST_F(GpuWindowsDecline, BadArgumentsEachGetTheirError) {
  GpuRanks g(devicesFor(2));
  ASSERT_TRUE(g.ok());
  GroupWindows made(g, 0);
  ASSERT_FALSE(::testing::Test::HasFailure());
  const std::vector<void*>& buffers = made.buffers;
  const std::vector<ncclWindow_t>& wins = made.wins;
  ncclComm_t c0 = g.comm(0);
  ncclWindow_t w = wins[0];
  void* p = nullptr;
  int notAWindow = 0;
  ncclWindow_t bogus = reinterpret_cast<ncclWindow_t>(&notAWindow);
  const auto bad = [&](std::function<ncclResult_t()> call, std::vector<std::string> needles,
                       ncclComm_t comm = nullptr) {
    EXPECT_TRUE(failsWith(call, ncclInvalidArgument, needles, comm));
  };
  bad([&] { return ncclGetLsaDevicePointer(w, kBytes, 1, &p); }, {"offset", "past the window"});
  bad([&] { return ncclGetLsaDevicePointer(w, 0, 2, &p); }, {"rank 2", "load/store team"});
  bad([&] { return ncclGetLsaDevicePointer(w, 0, -1, &p); }, {"rank -1", "load/store team"});
  bad([&] { return ncclGetLsaDevicePointer(w, 0, 0, nullptr); }, {"outPtr is NULL"});
  bad([&] { return ncclGetLsaDevicePointer(nullptr, 0, 0, &p); }, {"window is NULL"});
  bad([&] { return ncclGetLsaDevicePointer(bogus, 0, 0, &p); }, {"not a live window"});
  bad([&] { return ncclGetPeerDevicePointer(w, 0, 2, &p); }, {"peer 2", "2 ranks"});
  bad([&] { return ncclGetPeerDevicePointer(w, 0, -1, &p); }, {"peer -1"});
  bad([&] { return ncclGetPeerDevicePointer(w, kBytes + 4, 1, &p); }, {"past the window"});
  bad([&] { return ncclGetMultimemDevicePointer(w, 0, ncclMultimemHandle{nullptr}, &p); },
      {"mcBasePtr is NULL"});
  bad([&] { return ncclWinGetUserPtr(c0, nullptr, &p); }, {"win is NULL"}, c0);
  bad([&] { return ncclWinGetUserPtr(c0, bogus, &p); }, {"not a live window"}, c0);
  bad([&] { return ncclWinGetUserPtr(c0, w, nullptr); }, {"outUserPtr is NULL"}, c0);
  // Rank 1's window is not rank 0's communicator's.
  bad([&] { return ncclCommWindowDeregister(c0, wins[1]); }, {"not a live window"}, c0);
  bad([&] { return ncclCommWindowDeregister(c0, bogus); }, {"not a live window"}, c0);
  bad([&] { return ncclCommWindowRegister(c0, buffers[0], kBytes, nullptr, 0); }, {"win is NULL"},
      c0);
  bad([&] { return ncclCommWindowRegister(c0, buffers[0], 0, &w, 0); }, {"size 0"}, c0);
  bad([&] { return ncclCommWindowRegister(c0, buffers[0], kBytes, &w, 0x100); }, {"unknown flags"},
      c0);
  w = wins[0];
  // No multimem (NVLS) in braid: a live window's multimem pointers are NULL, as NCCL's without it.
  p = &notAWindow;
  EXPECT_EQ(ncclGetLsaMultimemDevicePointer(w, 0, &p), ncclSuccess);
  EXPECT_EQ(p, nullptr);
  // The last byte is inside the window.
  EXPECT_EQ(ncclGetLsaDevicePointer(w, kBytes - 1, 1, &p), ncclSuccess);
  made.release(g);
}

// Windows left registered are released by ncclCommDestroy; their handles are then unknown.
TEST_F(GpuWindowsDecline, DestroyReleasesWindowsLeftRegistered) {
  std::vector<void*> buffers;
  std::vector<ncclWindow_t> wins;
  const std::vector<int> devices = devicesFor(2);
  {
    GpuRanks g(devices);
    ASSERT_TRUE(g.ok());
    GroupWindows made(g, 0);
    buffers = made.buffers;
    wins = made.wins;
  }
  void* p = nullptr;
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(failsWith([&] { return ncclGetLsaDevicePointer(wins[r], 0, 0, &p); },
                          ncclInvalidArgument, {"not a live window"}));
    deviceApi()->setDevice(devices[r]);
    EXPECT_EQ(ncclMemFree(buffers[r]), ncclSuccess);
  }
}

}  // namespace
