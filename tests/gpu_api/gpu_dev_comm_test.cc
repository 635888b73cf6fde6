// gpu_dev_comm_test.cc: device communicators (ncclDevCommCreate / ncclDevCommDestroy) of GPU
// communicators, through braid's nccl_device.h as a user's program includes it, on the emulated
// GPU (and a real one). Four ranks of one process, each GPU its own or two to a GPU: properties
// say the device API is there; devcomms are made in a group as nccl-tests makes them, with the
// fields a kernel reads; their LSA barrier cells start at zero and every rank's table names the
// same cells; multimem and GIN are refused on GPUs too, naming the field; a devcomm destroyed
// twice is refused. On the emulated GPU, whose memory the host reads, the barrier's counting
// (nccl_device/lsa_barrier.h, the code kernels run) is run by threads as ranks over a devcomm's
// cells, and by processes as ranks over cells mapped across processes, and the window pointer
// functions are called on the host over a window laid out by hand in emulated device memory.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "api/api_test_util.h"
#include "gpu_api/gpu_cases.h"
#include "nccl_device.h"

namespace {

using braid::testing::failsWith;
using braid::testing::gpu::deviceApi;
using braid::testing::gpu::devicesFor;
using braid::testing::gpu::GpuRanks;

constexpr int kRanks = 4;
constexpr int kBarriers = 3;

/// Every rank's devcomm with `barriers` LSA barriers, made in one group (nccl-tests' way).
std::vector<ncclDevComm_t> makeDevComms(const GpuRanks& g, int barriers) {
  std::vector<ncclDevComm_t> devComms(g.size());
  ncclDevCommRequirements_t reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaBarrierCount = barriers;
  EXPECT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < g.size(); ++r) {
    EXPECT_EQ(ncclDevCommCreate(g.comm(r), &reqs, &devComms[r]), ncclSuccess)
        << ncclGetLastError(nullptr);
  }
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  return devComms;
}

/// `n` values of type T at device address `at`, copied to the host.
template <typename T>
std::vector<T> fromDevice(const void* at, size_t n) {
  std::vector<T> values(n);
  EXPECT_EQ(deviceApi()->copy(values.data(), at, n * sizeof(T), nullptr), ncclSuccess);
  EXPECT_EQ(deviceApi()->streamSynchronize(nullptr), ncclSuccess);
  return values;
}

class GpuDevComm : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { BRAID_REQUIRE_GPU(); }
  /// The ranks: each on a GPU of its own, or GetParam() to a GPU.
  std::vector<int> devices() const { return devicesFor(kRanks, GetParam()); }
};

TEST_P(GpuDevComm, PropertiesSayTheDeviceApiIsThere) {
  GpuRanks g(devices());
  ASSERT_TRUE(g.ok());
  for (int r = 0; r < kRanks; ++r) {
    ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
    ASSERT_EQ(ncclCommQueryProperties(g.comm(r), &props), ncclSuccess);
    EXPECT_TRUE(props.deviceApiSupport) << "rank " << r;
    EXPECT_EQ(props.cudaDev, g.device(r));
    EXPECT_EQ(props.nLsaTeams, 1);
    EXPECT_FALSE(props.multimemSupport);
    EXPECT_EQ(props.ginType, NCCL_GIN_TYPE_NONE);
  }
}

TEST_P(GpuDevComm, DevCommsHoldTheRanksAndZeroedBarrierCells) {
  GpuRanks g(devices());
  ASSERT_TRUE(g.ok());
  std::vector<ncclDevComm_t> devComms = makeDevComms(g, kBarriers);
  std::vector<std::vector<uint32_t*>> tables(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    const ncclDevComm_t& d = devComms[r];
    EXPECT_EQ(d.magic, static_cast<unsigned>(NCCL_API_MAGIC));
    EXPECT_EQ(d.rank, r);
    EXPECT_EQ(d.nRanks, kRanks);
    EXPECT_EQ(d.lsaRank, r);
    EXPECT_EQ(d.lsaSize, kRanks);
    EXPECT_EQ(d.lsaBarrier.nBarriers, kBarriers);
    EXPECT_EQ(d.lsaMultimem.mcBasePtr, nullptr);
    EXPECT_EQ(ncclTeamLsa(d).nRanks, kRanks);
    EXPECT_EQ(ncclTeamRankToWorld(d, ncclTeamLsa(d), 2), 2);
    ASSERT_NE(d.lsaBarrierCells, nullptr);
    ASSERT_EQ(deviceApi()->setDevice(g.device(r)), ncclSuccess);
    tables[r] = fromDevice<uint32_t*>(d.lsaBarrierCells, kRanks);
  }
  const size_t cells = nccl::braid_detail::lsaBarrierCellCount(kBarriers, kRanks);
  for (int owner = 0; owner < kRanks; ++owner) {
    // One process: every rank reaches rank `owner`'s cells at the address it has them at.
    for (int r = 0; r < kRanks; ++r) EXPECT_EQ(tables[r][owner], tables[owner][owner]);
    ASSERT_EQ(deviceApi()->setDevice(g.device(owner)), ncclSuccess);
    for (uint32_t cell : fromDevice<uint32_t>(tables[owner][owner], cells)) EXPECT_EQ(cell, 0u);
  }
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(ncclDevCommDestroy(g.comm(r), &devComms[r]), ncclSuccess)
        << ncclGetLastError(nullptr);
    EXPECT_TRUE(failsWith([&] { return ncclDevCommDestroy(g.comm(r), &devComms[r]); },
                          ncclInvalidArgument, {"ncclDevCommDestroy", "freed already"}));
  }
}

TEST_P(GpuDevComm, MultimemAndGinAreRefusedOnGpusToo) {
  GpuRanks g(devices());
  ASSERT_TRUE(g.ok());
  ncclDevComm_t d{};
  ncclDevCommRequirements_t reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaBarrierCount = 1;
  reqs.lsaMultimem = true;
  EXPECT_TRUE(failsWith([&] { return ncclDevCommCreate(g.comm(0), &reqs, &d); }, ncclInvalidUsage,
                        {"braid declines lsaMultimem", "no multimem"}));
  reqs.lsaMultimem = false;
  reqs.ginSignalCount = 8;
  reqs.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  EXPECT_TRUE(failsWith([&] { return ncclDevCommCreate(g.comm(0), &reqs, &d); }, ncclInvalidUsage,
                        {"braid declines ginSignalCount", "no GIN"}));
  EXPECT_EQ(d.magic, 0u) << "a refused devcomm was written";
}

TEST_P(GpuDevComm, DevCommsWithoutBarriersHoldNoMemory) {
  GpuRanks g(devices());
  ASSERT_TRUE(g.ok());
  std::vector<ncclDevComm_t> devComms = makeDevComms(g, 0);
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(devComms[r].lsaBarrierCells, nullptr);
    EXPECT_EQ(devComms[r].lsaBarrier.nBarriers, 0);
    EXPECT_EQ(ncclDevCommDestroy(g.comm(r), &devComms[r]), ncclSuccess);
  }
}

INSTANTIATE_TEST_SUITE_P(, GpuDevComm, ::testing::Values(0, 2),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return p.param == 0 ? std::string("GpuEach") : std::string("TwoPerGpu");
                         });

/// The emulated GPU's memory is the host's: these run the device code's host instance on it.
class EmulatedDevComm : public ::testing::Test {
 protected:
  void SetUp() override {
    BRAID_REQUIRE_GPU();
    // Asked in a child, so that a test that forks its ranks finds the runtime unused here.
    static const int emulated = braid::testing::probeInChild([] { return deviceApi()->emulated; });
    if (emulated == 0) GTEST_SKIP() << "reads device memory from the host";
  }
};

TEST_F(EmulatedDevComm, ThreadsAsRanksPassTheBarrierInStep) {
  BRAID_REQUIRE_GPUS(kRanks);
  GpuRanks g(devicesFor(kRanks));
  ASSERT_TRUE(g.ok());
  std::vector<ncclDevComm_t> devComms = makeDevComms(g, kBarriers);
  constexpr int kRounds = 200;
  // What each rank wrote in each round, plain stores: the barrier must make them visible.
  std::vector<int> written(kRanks * (kRounds + 1), -1);
  std::atomic<int> wrong{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.emplace_back([&, r] {
      const ncclDevComm_t& d = devComms[r];
      const nccl::braid_detail::LsaBarrierCells cells{
          d.lsaBarrierCells, d.lsaBarrier.bufHandle, d.lsaBarrier.nBarriers, 1, d.lsaRank,
          d.lsaSize};
      for (uint32_t k = 1; k <= kRounds; ++k) {
        written[r * (kRounds + 1) + k] = static_cast<int>(k) * 10 + r;
        cells.arrive(0, 1, k);
        cells.wait(0, 1, k);
        for (int p = 0; p < kRanks; ++p) {
          if (written[p * (kRounds + 1) + k] != static_cast<int>(k) * 10 + p) wrong += 1;
        }
      }
    });
  }
  for (std::thread& t : ranks) t.join();
  EXPECT_EQ(wrong.load(), 0) << "a rank passed a round before a peer had written";
  for (int r = 0; r < kRanks; ++r)
    EXPECT_EQ(ncclDevCommDestroy(g.comm(r), &devComms[r]), ncclSuccess);
}

TEST_F(EmulatedDevComm, ProcessesAsRanksShareTheirCells) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runProcesses(2, [&](int rank) {
    ASSERT_EQ(deviceApi()->setDevice(0), ncclSuccess);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, 2, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    ncclDevCommRequirements_t reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
    reqs.lsaBarrierCount = 1;
    ncclDevComm_t d{};
    ASSERT_EQ(ncclDevCommCreate(comm, &reqs, &d), ncclSuccess) << ncclGetLastError(nullptr);
    const nccl::braid_detail::LsaBarrierCells cells{d.lsaBarrierCells, 0,        1, 0,
                                                    d.lsaRank,         d.lsaSize};
    for (uint32_t k = 1; k <= 100; ++k) {
      cells.arrive(0, 1, k);
      cells.wait(0, 1, k);
      // The peer has arrived at k: its store is in this rank's inbox, through its own mapping.
      ASSERT_GE(*cells.inbox(d.lsaRank, 1 - d.lsaRank), k);
    }
    EXPECT_EQ(ncclDevCommDestroy(comm, &d), ncclSuccess) << ncclGetLastError(nullptr);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

TEST_F(EmulatedDevComm, WindowPointersOfAWindowLaidOutByHand) {
  // Three ranks' buffers of 64 bytes, and a window of rank 1 (world rank 5, its team starting
  // at world rank 4) that maps them, all in emulated device memory.
  constexpr int kLsa = 3;
  std::vector<void*> buffers(kLsa, nullptr);
  for (void*& b : buffers) ASSERT_EQ(deviceApi()->alloc(&b, 64), ncclSuccess);
  void* bases = nullptr;
  void* window = nullptr;
  ASSERT_EQ(deviceApi()->alloc(&bases, sizeof(char*) * kLsa), ncclSuccess);
  ASSERT_EQ(deviceApi()->alloc(&window, sizeof(ncclWindow_vidmem)), ncclSuccess);
  ncclWindow_vidmem w{};
  w.magic = BRAID_WINDOW_MAGIC;
  w.worldRank = 5;
  w.worldSize = 8;
  w.lsaRank = 1;
  w.lsaSize = kLsa;
  w.lsaFirstWorldRank = 4;
  w.size = 64;
  w.localBase = static_cast<char*>(buffers[1]);
  w.lsaBases = static_cast<char* const*>(bases);
  ASSERT_EQ(deviceApi()->copy(bases, buffers.data(), sizeof(char*) * kLsa, nullptr), ncclSuccess);
  ASSERT_EQ(deviceApi()->copy(window, &w, sizeof w, nullptr), ncclSuccess);
  ASSERT_EQ(deviceApi()->streamSynchronize(nullptr), ncclSuccess);

  auto win = static_cast<ncclWindow_t>(window);
  auto at = [](void* base, size_t offset) -> void* { return static_cast<char*>(base) + offset; };
  EXPECT_EQ(ncclGetLocalPointer(win, 8), at(buffers[1], 8));
  for (int p = 0; p < kLsa; ++p) EXPECT_EQ(ncclGetLsaPointer(win, 16, p), at(buffers[p], 16));
  EXPECT_EQ(ncclGetPeerPointer(win, 4, 6), at(buffers[2], 4));
  EXPECT_EQ(ncclGetPeerPointer(win, 4, 3), nullptr) << "world rank 3 is of another host";
  EXPECT_EQ(ncclGetPeerPointer(win, 4, 7), nullptr) << "world rank 7 is of another host";
  const ncclTeam world{8, 5, 1};
  EXPECT_EQ(ncclGetPeerPointer(win, 0, world, 4), at(buffers[0], 0));
  const ncclTeam pairs{4, 2, 2};  // world ranks 1, 3, 5, 7: only 5 is of this host
  EXPECT_EQ(ncclGetPeerPointer(win, 0, pairs, 2), at(buffers[1], 0));
  EXPECT_EQ(ncclGetPeerPointer(win, 0, pairs, 3), nullptr);
  for (void* b : buffers) EXPECT_EQ(deviceApi()->release(b), ncclSuccess);
  EXPECT_EQ(deviceApi()->release(bases), ncclSuccess);
  EXPECT_EQ(deviceApi()->release(window), ncclSuccess);
}

}  // namespace
