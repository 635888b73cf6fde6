// Forking after braid was used. A child forked after its parent used the GPU runtime gets a
// runtime that refuses every call (gpu/runtime.cc; GpuProcesses.AChildForkedAfterTheParent-
// UsedTheGpuIsRefusedSayingWhy checks it on the emulated GPU). Where the runtime has no device,
// there is no CUDA state a child could lack: a host-memory program may make communicators,
// fork, and make more in the child, as before.
#include <gtest/gtest.h>

#include "nccl.h"
#include "support/multiprocess.h"

namespace {

TEST(Fork, AProcessWithoutGpusMayForkAfterUsingBraid) {
  // ncclCommInitRank asks the GPU runtime for the current device: the parent uses it here.
  ncclUniqueId first;
  ASSERT_EQ(ncclGetUniqueId(&first), ncclSuccess);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitRank(&comm, 1, first, 0), ncclSuccess) << ncclGetLastError(nullptr);
  int device = 0;
  ASSERT_EQ(ncclCommCuDevice(comm, &device), ncclSuccess);
  if (device >= 0) {
    ncclCommDestroy(comm);
    GTEST_SKIP() << "this process has a GPU (device " << device
                 << "): its children may not use braid's GPU runtime";
  }
  ASSERT_EQ(ncclCommDestroy(comm), ncclSuccess);
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runProcesses(2, [&](int rank) {
    ncclComm_t c = nullptr;
    ASSERT_EQ(ncclCommInitRank(&c, 2, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    float x = 1.0f + rank;
    EXPECT_EQ(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, c, nullptr), ncclSuccess)
        << ncclGetLastError(c);
    EXPECT_EQ(x, 3.0f);
    EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  });
}

}  // namespace
