// lsa_kernels_program.cu: kernels written against braid's nccl_device.h the way NVIDIA's
// nccl-tests writes its device implementations (all_reduce.cu's LSA kernel, alltoall.cu's GIN
// and hybrid kernels), built by nvcc in the CUDA build. On a GPU it runs the LSA ones: two
// ranks of one process on device 0 (braid lets ranks share a GPU), each rank's devcomm with an
// LSA barrier per block, and a window per rank and buffer laid out by hand in device memory
// (include/nccl_device/window_layout.h: what ncclCommWindowRegister hands out), through which
// each rank sums its slice over both ranks' send buffers and stores it into both receive
// buffers between two barrier syncs. The receive buffers must hold the sums; the teams a kernel
// computes must match the host's. The GIN and multimem kernels are compiled, never launched:
// braid refuses the devcomms they need. Exits 77 (skipped) without a GPU.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "nccl.h"
#include "nccl_device.h"

namespace {

constexpr int kRanks = 2;
constexpr int kBlocks = 4;
constexpr int kThreads = 256;
constexpr size_t kCount = 1 << 20;

#define CHECK_CUDA(call)                                            \
  do {                                                              \
    cudaError_t braidError = (call);                                \
    if (braidError != cudaSuccess) {                                \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
              cudaGetErrorString(braidError));                      \
      exit(1);                                                      \
    }                                                               \
  } while (0)
#define CHECK_NCCL(call)                                                   \
  do {                                                                     \
    ncclResult_t braidResult = (call);                                     \
    if (braidResult != ncclSuccess) {                                      \
      fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call,   \
              ncclGetErrorString(braidResult), ncclGetLastError(nullptr)); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

/// As nccl-tests' allReduceLsaKernel: each rank reduces its slice across the LSA team's send
/// buffers and stores the result into every rank's receive buffer.
template <typename T>
__global__ void allReduceLsa(ncclWindow_t sendwin, ncclWindow_t recvwin, size_t count,
                             ncclDevComm devComm) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), devComm, ncclTeamLsa(devComm),
                                         devComm.lsaBarrier, blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);
  const int rank = devComm.rank, nRanks = devComm.nRanks;
  const size_t slice = (count + nRanks - 1) / nRanks;
  const size_t begin = rank * slice, end = begin + slice < count ? begin + slice : count;
  for (size_t i = begin + blockIdx.x * blockDim.x + threadIdx.x; i < end;
       i += gridDim.x * blockDim.x) {
    T sum = 0;
    for (int peer = 0; peer < ncclTeamLsa(devComm).nRanks; ++peer) {
      sum += static_cast<T*>(ncclGetLsaPointer(sendwin, 0, peer))[i];
    }
    for (int peer = 0; peer < nRanks; ++peer) {
      static_cast<T*>(ncclGetPeerPointer(recvwin, 0, ncclTeamWorld(devComm), peer))[i] = sum;
    }
  }
  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

/// The teams as a kernel sees them, and a warp's and a thread's groups, written to `out`.
__global__ void teamsAndGroups(ncclDevComm devComm, int* out) {
  ncclCoopWarp warp;
  ncclCoopThread self;
  const ncclTeam world = ncclTeamWorld(devComm), lsa = ncclTeamLsa(devComm),
                 rail = ncclTeamRail(devComm);
  if (threadIdx.x == 0) {
    const int values[] = {
        world.nRanks, world.rank,  lsa.nRanks,
        lsa.rank,     rail.nRanks, rail.stride,
        warp.size(),  self.size(), ncclTeamRankToWorld(devComm, lsa, lsa.nRanks - 1)};
    for (int i = 0; i < 9; ++i) out[i] = values[i];
  }
  warp.sync();
}

/// As nccl-tests' GinAlltoAllKernel: compiled only (braid has no GIN; its devcomm is refused).
template <typename T>
__global__ void ginAlltoAll(ncclWindow_t sendwin, ncclWindow_t recvwin, size_t count,
                            ncclDevComm devComm) {
  ncclGin gin{devComm, 0};
  const uint64_t signalValue = gin.readSignal(blockIdx.x);
  ncclBarrierSession<ncclCoopCta> bar{ncclCoopCta(), ncclTeamTagWorld(), gin, blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire, ncclGinFenceLevel::Relaxed);
  const size_t size = count * sizeof(T);
  for (int r = threadIdx.x; r < devComm.nRanks; r += blockDim.x) {
    gin.put(ncclTeamWorld(devComm), r, recvwin, devComm.rank * size, sendwin, r * size, size,
            ncclGin_SignalInc{blockIdx.x});
  }
  gin.waitSignal(ncclCoopCta(), blockIdx.x, signalValue + devComm.nRanks);
  gin.flush(ncclCoopCta());
  bar.sync(ncclCoopCta(), cuda::memory_order_release, ncclGinFenceLevel::Relaxed);
}

/// As nccl-tests' multimem kernels: compiled only (braid has no multimem).
__global__ void multimemTouch(ncclWindow_t win, ncclDevComm devComm) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), devComm, ncclTeamTagLsa(), blockIdx.x,
                                         true};
  bar.sync(ncclCoopCta(), cuda::memory_order_relaxed);
  static_cast<float*>(ncclGetLsaMultimemPointer(win, 0, devComm))[threadIdx.x] = 0;
}

/// Rank `r`'s window over `buffers` (one per rank, all of this process), in device memory.
ncclWindow_t makeWindow(const std::vector<char*>& buffers, int r, size_t bytes) {
  char** bases = nullptr;
  CHECK_CUDA(cudaMalloc(&bases, sizeof(char*) * buffers.size()));
  CHECK_CUDA(
      cudaMemcpy(bases, buffers.data(), sizeof(char*) * buffers.size(), cudaMemcpyHostToDevice));
  ncclWindow_vidmem w{};
  w.magic = BRAID_WINDOW_MAGIC;
  w.worldRank = r;
  w.worldSize = static_cast<int>(buffers.size());
  w.lsaRank = r;
  w.lsaSize = static_cast<int>(buffers.size());
  w.lsaFirstWorldRank = 0;
  w.size = bytes;
  w.localBase = buffers[r];
  w.lsaBases = bases;
  ncclWindow_vidmem* window = nullptr;
  CHECK_CUDA(cudaMalloc(&window, sizeof w));
  CHECK_CUDA(cudaMemcpy(window, &w, sizeof w, cudaMemcpyHostToDevice));
  return window;
}

int failures = 0;
void expect(bool ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

/// Launches every rank's all-reduce at once (each on its own stream) and checks the sums.
void allReduce(const std::vector<ncclDevComm>& devComms, const std::vector<cudaStream_t>& streams) {
  const size_t bytes = kCount * sizeof(float);
  std::vector<char*> send(kRanks), recv(kRanks);
  std::vector<float> host(kCount);
  for (int r = 0; r < kRanks; ++r) {
    CHECK_CUDA(cudaMalloc(&send[r], bytes));
    CHECK_CUDA(cudaMalloc(&recv[r], bytes));
    for (size_t i = 0; i < kCount; ++i) host[i] = static_cast<float>((i % 1000) * (r + 1));
    CHECK_CUDA(cudaMemcpy(send[r], host.data(), bytes, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(recv[r], 0, bytes));
  }
  std::vector<ncclWindow_t> sendWins(kRanks), recvWins(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    sendWins[r] = makeWindow(send, r, bytes);
    recvWins[r] = makeWindow(recv, r, bytes);
  }
  for (int round = 0; round < 3; ++round) {  // the barriers' counts carry over between launches
    for (int r = 0; r < kRanks; ++r) {
      allReduceLsa<float>
          <<<kBlocks, kThreads, 0, streams[r]>>>(sendWins[r], recvWins[r], kCount, devComms[r]);
      CHECK_CUDA(cudaGetLastError());
    }
    for (int r = 0; r < kRanks; ++r) CHECK_CUDA(cudaStreamSynchronize(streams[r]));
  }
  size_t wrong = 0;
  for (int r = 0; r < kRanks; ++r) {
    CHECK_CUDA(cudaMemcpy(host.data(), recv[r], bytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < kCount; ++i) wrong += host[i] != static_cast<float>((i % 1000) * 3);
  }
  expect(wrong == 0, "the LSA all-reduce's sums");
}

void checkTeams(const std::vector<ncclDevComm>& devComms) {
  int* out = nullptr;
  CHECK_CUDA(cudaMalloc(&out, 9 * sizeof(int)));
  for (int r = 0; r < kRanks; ++r) {
    teamsAndGroups<<<1, 64>>>(devComms[r], out);
    int got[9];
    CHECK_CUDA(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
    const int want[9] = {kRanks, r, kRanks, r, 1, kRanks, 32, 1, kRanks - 1};
    for (int i = 0; i < 9; ++i) expect(got[i] == want[i], "a team or group seen by a kernel");
  }
  CHECK_CUDA(cudaFree(out));
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("SKIP: no CUDA device\n");
    return 77;
  }
  // Referenced so that nvcc compiles them for the device; never launched.
  (void)&ginAlltoAll<float>;
  (void)&multimemTouch;
  std::vector<ncclComm_t> comms(kRanks);
  const int onDevice0[kRanks] = {0, 0};
  CHECK_NCCL(ncclCommInitAll(comms.data(), kRanks, onDevice0));
  ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
  CHECK_NCCL(ncclCommQueryProperties(comms[0], &props));
  expect(props.deviceApiSupport, "deviceApiSupport on one GPU");
  std::vector<ncclDevComm> devComms(kRanks);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaBarrierCount = kBlocks;
  CHECK_NCCL(ncclGroupStart());
  for (int r = 0; r < kRanks; ++r) CHECK_NCCL(ncclDevCommCreate(comms[r], &reqs, &devComms[r]));
  CHECK_NCCL(ncclGroupEnd());
  std::vector<cudaStream_t> streams(kRanks);
  for (cudaStream_t& s : streams) CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  checkTeams(devComms);
  allReduce(devComms, streams);
  for (int r = 0; r < kRanks; ++r) CHECK_NCCL(ncclDevCommDestroy(comms[r], &devComms[r]));
  for (ncclComm_t c : comms) CHECK_NCCL(ncclCommDestroy(c));
  if (failures != 0) return 1;
  printf("OK: device API kernels on %d ranks of one GPU\n", kRanks);
  return 0;
}
