// A collective captured into a CUDA graph and replayed: braid launches with no host callback in
// the data path and keeps its device programs alive, so a graph replays the all-reduce as many
// times as it is launched. Real GPUs only (the emulated GPU has no graphs): part of
// braid_gpu_api_tests, label gpu, skipped without a device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "nccl.h"

namespace {

// The call runs once: its result is both checked and described.
#define CUDA_OK(call)                                            \
  do {                                                           \
    const cudaError_t braidCudaResult = (call);                  \
    ASSERT_EQ(braidCudaResult, cudaSuccess)                      \
        << #call << ": " << cudaGetErrorString(braidCudaResult); \
  } while (0)

TEST(GraphCapture, AllReduceReplaysInAGraph) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    GTEST_SKIP() << "no CUDA device";
  }
  // Two ranks on one GPU (or two), each with a stream of its own.
  const int n = 2;
  std::vector<int> devlist = {0, devices > 1 ? 1 : 0};
  std::vector<ncclComm_t> comms(n);
  ASSERT_EQ(ncclCommInitAll(comms.data(), n, devlist.data()), ncclSuccess)
      << ncclGetLastError(nullptr);
  const size_t count = 1 << 18;
  std::vector<float*> buf(n);
  std::vector<cudaStream_t> streams(n);
  for (int r = 0; r < n; ++r) {
    CUDA_OK(cudaSetDevice(devlist[r]));
    CUDA_OK(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking));
    CUDA_OK(cudaMalloc(&buf[r], count * sizeof(float)));
    std::vector<float> init(count, 1.0f + r);
    CUDA_OK(cudaMemcpy(buf[r], init.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  }
  auto allReduce = [&] {
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < n; ++r) {
      ncclAllReduce(buf[r], buf[r], count, ncclFloat32, ncclSum, comms[r], streams[r]);
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  };
  // Uncaptured first: connections and device programs are made here, not in the capture.
  allReduce();  // 1 + 2 = 3
  for (int r = 0; r < n; ++r) CUDA_OK(cudaStreamSynchronize(streams[r]));

  std::vector<cudaGraph_t> graphs(n);
  std::vector<cudaGraphExec_t> execs(n);
  for (int r = 0; r < n; ++r) {
    CUDA_OK(cudaSetDevice(devlist[r]));
    CUDA_OK(cudaStreamBeginCapture(streams[r], cudaStreamCaptureModeThreadLocal));
  }
  allReduce();  // captured, not run
  for (int r = 0; r < n; ++r) {
    CUDA_OK(cudaSetDevice(devlist[r]));
    CUDA_OK(cudaStreamEndCapture(streams[r], &graphs[r]));
    CUDA_OK(cudaGraphInstantiate(&execs[r], graphs[r], 0));
  }
  const int replays = 3;
  for (int i = 0; i < replays; ++i) {
    for (int r = 0; r < n; ++r) {
      CUDA_OK(cudaSetDevice(devlist[r]));
      CUDA_OK(cudaGraphLaunch(execs[r], streams[r]));
    }
  }
  float expected = 3.0f;
  for (int i = 0; i < replays; ++i) expected *= 2;  // every replay sums two equal values
  for (int r = 0; r < n; ++r) {
    CUDA_OK(cudaSetDevice(devlist[r]));
    CUDA_OK(cudaStreamSynchronize(streams[r]));
    std::vector<float> out(count);
    CUDA_OK(cudaMemcpy(out.data(), buf[r], count * sizeof(float), cudaMemcpyDeviceToHost));
    EXPECT_EQ(out, std::vector<float>(count, expected)) << "rank " << r;
    ncclResult_t async = ncclInternalError;
    EXPECT_EQ(ncclCommGetAsyncError(comms[r], &async), ncclSuccess);
    EXPECT_EQ(async, ncclSuccess) << ncclGetLastError(comms[r]);
    cudaGraphExecDestroy(execs[r]);
    cudaGraphDestroy(graphs[r]);
  }
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(ncclCommDestroy(comms[r]), ncclSuccess);
    cudaFree(buf[r]);
    cudaStreamDestroy(streams[r]);
  }
}

}  // namespace
