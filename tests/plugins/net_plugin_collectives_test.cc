// Collectives across hosts through a network plugin (transport/net/plugin): 4 ranks as
// processes on 2 hosts (BRAID_HOSTID per pair, so shared memory within a host and the network
// between them), NCCL_NET_PLUGIN naming the TCP plugin built beside this binary
// (net_tcp_plugin.cc), linked with libnccl.so.2 as a user's program is. Every collective is
// checked against the reference on random inputs (api/matrix_cases.h), through the plugin's v6
// table and its v12 one; the plugin's record (BRAID_TEST_NET_PLUGIN_RECORD) says which table
// braid took and that the bytes went through it. Then the fall backs: a plugin with no device
// and a path that does not load leave braid's sockets to carry the same collectives; NCCL_NET
// naming a network nobody has is an error; with NCCL_NET_PLUGIN unset and no libnccl-net.so,
// nothing changes; an isend that fails mid-call ends the call with an error that names the
// plugin, on host communicators and under a kernel of the emulated GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/matrix_cases.h"
#include "api/process_cases.h"
#include "braid_ext.h"
#include "support/multiprocess.h"

namespace {

using braid::testing::matrix::Case;
using braid::testing::matrix::Coll;
using braid::testing::matrix::Op;

constexpr int kRanks = 4;

std::string pluginPath(const std::string& variant) {
  return std::string(BRAID_TEST_PLUGIN_DIR) + "/libnccl-net-" + variant + ".so";
}

// Every collective, float32 sum and int32 max, small and large (over a FIFO's slot), in and out
// of place, on the last rank as root.
std::vector<Case> everyCollective() {
  std::vector<Case> cases;
  for (Coll coll : braid::testing::matrix::kAllColls) {
    for (auto [type, op] : {std::pair{ncclFloat32, Op::kSum}, std::pair{ncclInt32, Op::kMax}}) {
      for (size_t count : {size_t{1}, size_t{1000}, size_t{300001}}) {
        for (bool inPlace : {false, true}) {
          if (inPlace ? !braid::testing::matrix::hasInPlace(coll)
                      : !braid::testing::matrix::hasOutOfPlace(coll)) {
            continue;
          }
          cases.push_back({coll, type, op, count, kRanks, inPlace, kRanks - 1});
        }
      }
    }
  }
  return cases;
}

// A record file of this test's own, removed when it goes.
class Record {
 public:
  Record() : path_("/tmp/braid-net-plugin-record-" + std::to_string(getpid())) {
    std::remove(path_.c_str());
  }
  ~Record() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }
  /// How many lines start with `prefix`, and the sum of the numbers after it.
  std::pair<int, long> count(const std::string& prefix) const {
    std::ifstream in(path_);
    std::string line;
    int lines = 0;
    long sum = 0;
    while (std::getline(in, line)) {
      if (line.rfind(prefix, 0) != 0) continue;
      ++lines;
      sum += std::atol(line.c_str() + prefix.size());
    }
    return {lines, sum};
  }

 private:
  std::string path_;
};

// Each rank's environment: its host, the plugin setting, the record.
void onHosts(int rank, const std::string& plugin, const Record& record) {
  setenv("BRAID_HOSTID", rank < kRanks / 2 ? "plugin-host-a" : "plugin-host-b", 1);
  setenv("NCCL_NET_PLUGIN", plugin.c_str(), 1);
  setenv("BRAID_TEST_NET_PLUGIN_RECORD", record.path().c_str(), 1);
}

class NetPluginCollectives : public ::testing::TestWithParam<int> {};

TEST_P(NetPluginCollectives, EveryCollectiveMatchesTheReference) {
  const int version = GetParam();
  const std::string variant = version == 6 ? "braidtest6" : "braidtest";
  Record record;
  braid::testing::matrix::runCasesInProcesses(
      kRanks, everyCollective(), [&](int rank) { onHosts(rank, pluginPath(variant), record); });
  const auto inits = record.count("init v");
  EXPECT_EQ(inits.first, kRanks) << "every process initializes the plugin once";
  EXPECT_EQ(inits.second, long{version} * kRanks) << "the table braid took is v" << version;
  const auto sent = record.count("sent ");
  EXPECT_GT(sent.first, 0) << "no send comm was closed: the plugin carried nothing";
  EXPECT_GT(sent.second, 0) << "no message went through the plugin";
}

INSTANTIATE_TEST_SUITE_P(Versions, NetPluginCollectives, ::testing::Values(6, 12),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "v" + std::to_string(info.param);
                         });

// All-reduce and all-gather only: what matters is that the built-in network carries them.
std::vector<Case> someCollectives() {
  return {{Coll::kAllReduce, ncclFloat32, Op::kSum, 300001, kRanks, false, 0},
          {Coll::kAllGather, ncclInt32, Op::kSum, 1000, kRanks, false, 0}};
}

TEST(NetPluginFallback, APluginWithNoDeviceLeavesTheBuiltInNetwork) {
  Record record;
  braid::testing::matrix::runCasesInProcesses(kRanks, someCollectives(), [&](int rank) {
    onHosts(rank, pluginPath("braidtest-nodev"), record);
  });
  EXPECT_EQ(record.count("init v").first, kRanks);
  EXPECT_EQ(record.count("sent ").first, 0);
}

TEST(NetPluginFallback, APathThatDoesNotLoadLeavesTheBuiltInNetwork) {
  Record record;
  braid::testing::matrix::runCasesInProcesses(kRanks, someCollectives(), [&](int rank) {
    onHosts(rank, "/nonexistent/libnccl-net-x.so,nosuchplugin", record);
  });
}

// What every job that never heard of plugins runs: NCCL_NET_PLUGIN unset, so libnccl-net.so is
// looked for on the library path, and where there is none (this machine's case) the built-in
// network carries the collectives.
TEST(NetPluginFallback, UnsetLooksForLibncclNetSoAndFallsBack) {
  if (void* found = dlopen("libnccl-net.so", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(found);
    GTEST_SKIP() << "this machine has a libnccl-net.so, which braid would load";
  }
  braid::testing::matrix::runCasesInProcesses(kRanks, someCollectives(), [&](int rank) {
    setenv("BRAID_HOSTID", rank < kRanks / 2 ? "plugin-host-a" : "plugin-host-b", 1);
    unsetenv("NCCL_NET_PLUGIN");
    unsetenv("BRAID_NET_PLUGIN");
  });
}

// Runs `body(rank, comm)` on 2 ranks on 2 hosts whose environment `env(rank)` set; `init` is
// what creation must return.
template <typename Env, typename Body>
void twoHosts(Env env, ncclResult_t init, Body body) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runProcesses(2, [&](int rank) {
    setenv("BRAID_HOSTID", rank == 0 ? "plugin-host-a" : "plugin-host-b", 1);
    env(rank);
    ncclComm_t comm = nullptr;
    const ncclResult_t created = ncclCommInitRank(&comm, 2, id, rank);
    ASSERT_EQ(created, init) << ncclGetLastError(nullptr);
    body(rank, comm);
  });
}

// A host communicator's all-reduce of ones on 2 ranks, checked, then the communicator destroyed.
void sumOfOnes(int, ncclComm_t comm) {
  std::vector<float> data(1000, 1.0f);
  EXPECT_EQ(
      ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr),
      ncclSuccess)
      << ncclGetLastError(comm);
  EXPECT_EQ(data[999], 2.0f);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(NetPluginSelect, NcclNetNamingNoLoadedNetworkIsAnError) {
  twoHosts(
      [](int) {
        setenv("NCCL_NET_PLUGIN", pluginPath("braidtest").c_str(), 1);
        setenv("NCCL_NET", "nosuchnet", 1);
      },
      ncclInvalidUsage,
      [](int, ncclComm_t) {
        EXPECT_NE(std::string(ncclGetLastError(nullptr)).find("NCCL_NET=nosuchnet"),
                  std::string::npos)
            << ncclGetLastError(nullptr);
      });
}

TEST(NetPluginSelect, NcclNetNamingThePluginUsesIt) {
  Record record;
  twoHosts(
      [&](int) {
        setenv("NCCL_NET_PLUGIN", pluginPath("braidtest").c_str(), 1);
        setenv("NCCL_NET", "braidtest", 1);
        setenv("BRAID_TEST_NET_PLUGIN_RECORD", record.path().c_str(), 1);
      },
      ncclSuccess, sumOfOnes);
  EXPECT_GT(record.count("sent ").second, 0);
}

TEST(NetPluginFailure, AnIsendThatFailsEndsTheCallNamingThePlugin) {
  twoHosts(
      [](int rank) {
        setenv("NCCL_NET_PLUGIN", pluginPath("braidtest-failing").c_str(), 1);
        // Rank 0's plugin fails; rank 1 hears of it from its peer, in its own words.
        setenv("BRAID_TEST_NET_PLUGIN_FAIL_AFTER", rank == 0 ? "3" : "1000000", 1);
        // A backstop only: the failure ends the call at once, not at this deadline.
        setenv("BRAID_TIMEOUT_MS", "60000", 1);
      },
      ncclSuccess,
      [](int rank, ncclComm_t comm) {
        std::vector<float> data(1 << 20, 1.0f);
        const ncclResult_t result = ncclAllReduce(data.data(), data.data(), data.size(),
                                                  ncclFloat32, ncclSum, comm, nullptr);
        EXPECT_NE(result, ncclSuccess);
        const std::string error = ncclGetLastError(comm);
        if (rank == 0) {
          EXPECT_NE(error.find("NET plugin braidtest"), std::string::npos) << error;
          EXPECT_NE(error.find("isend"), std::string::npos) << error;
        }
        EXPECT_EQ(ncclCommAbort(comm), ncclSuccess);
      });
}

// The communicator's asynchronous error once it is not ncclSuccess; ncclSuccess if it stays so
// for 60 s (a failure the kernel never heard of).
ncclResult_t awaitAsyncError(ncclComm_t comm) {
  const auto by = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  ncclResult_t async = ncclSuccess;
  while (std::chrono::steady_clock::now() < by) {
    if (ncclCommGetAsyncError(comm, &async) != ncclSuccess || async != ncclSuccess) break;
    usleep(2000);
  }
  return async;
}

// Under a kernel: an all-reduce on GPU communicators (emulated GPU) whose FIFOs to the other
// host the plugin carries, where rank 0's plugin fails its `call`. The call returns at once; the
// failure turns the communicator's asynchronous error, the kernel ends, and the next call names
// the plugin and the call (on rank 0, which heard it in its own words). A call that fails as the
// FIFOs connect (`atConnection`) may have failed before the first call, which then fails at once.
void expectAsyncErrorNaming(int rank, ncclComm_t comm, const std::string& call,
                            bool atConnection = false) {
  const braidDeviceApi* gpu = braidGetDeviceApi();
  ASSERT_EQ(gpu->deviceCount(), 1) << "the emulated GPU did not come up";
  constexpr size_t kCount = 1 << 20;
  void* data = nullptr;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(gpu->alloc(&data, kCount * sizeof(float)), ncclSuccess);
  ASSERT_EQ(gpu->streamCreate(&stream), ncclSuccess);
  ASSERT_EQ(gpu->fill(data, 0, kCount * sizeof(float), stream), ncclSuccess);
  const ncclResult_t first = ncclAllReduce(data, data, kCount, ncclFloat32, ncclSum, comm, stream);
  if (!atConnection) ASSERT_EQ(first, ncclSuccess) << ncclGetLastError(comm);
  EXPECT_NE(awaitAsyncError(comm), ncclSuccess) << "rank " << rank << " never heard";
  EXPECT_EQ(gpu->streamSynchronize(stream), ncclSuccess) << "the kernel did not end";
  EXPECT_NE(ncclAllReduce(data, data, kCount, ncclFloat32, ncclSum, comm, stream), ncclSuccess);
  const std::string error = ncclGetLastError(comm);
  if (rank == 0) {
    EXPECT_NE(error.find("NET plugin braidtest"), std::string::npos) << error;
    EXPECT_NE(error.find(call), std::string::npos) << error;
  }
  EXPECT_EQ(ncclCommAbort(comm), ncclSuccess);
  gpu->streamDestroy(stream);
  gpu->release(data);
}

TEST(NetPluginFailure, AnIsendThatFailsUnderAKernelIsAnAsyncErrorNamingThePlugin) {
  twoHosts(
      [](int rank) {
        setenv("BRAID_EMULATE_GPUS", "1", 1);
        setenv("NCCL_NET_PLUGIN", pluginPath("braidtest-failing").c_str(), 1);
        setenv("BRAID_TEST_NET_PLUGIN_FAIL_AFTER", rank == 0 ? "3" : "1000000", 1);
        setenv("BRAID_TIMEOUT_MS", "60000", 1);
      },
      ncclSuccess, [](int rank, ncclComm_t comm) { expectAsyncErrorNaming(rank, comm, "isend"); });
}

// The plugin's devices on the topology: NCCL_TOPO_FILE is the DGX-like fixture (a NIC beside
// each GPU, four under each CPU), and the plugin reports three devices by their PCI paths: one
// under the second CPU, one under the first, one that is no PCI device. Each rank takes the
// device nearest it, which the plugin's record shows: every listen and connect on that device.
void expectEveryCommOnDevice(const Record& record, long dev) {
  for (const char* what : {"listen dev ", "connect dev "}) {
    const auto seen = record.count(what);
    EXPECT_GT(seen.first, 0) << "no " << what << "line: the plugin made no comm";
    EXPECT_EQ(seen.second, dev * seen.first) << what << "on another device than " << dev;
  }
}

// Two devices: one under the fixture's other PCIe switch, one beside its GPU 0 (0000:1b:00.0,
// under the switch of 0000:18:00.0).
constexpr const char* kDevices =
    "/sys/devices/pci0000:15/0000:15:01.0/0000:16:01.0/0000:40:00.0,"
    "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:18:00.0";

void onTheDgxFixture(const std::string& devices) {
  setenv("NCCL_TOPO_FILE", BRAID_TESTS_DIR "/data/topologies/dgx-h100-like.nccl.xml", 1);
  setenv("BRAID_TEST_NET_PLUGIN_DEVICES", devices.c_str(), 1);
}

TEST(NetPluginDevices, AHostRankTakesTheDeviceUnderItsCpu) {
  Record record;
  twoHosts(
      [&](int) {
        setenv("NCCL_NET_PLUGIN", pluginPath("braidtest").c_str(), 1);
        setenv("BRAID_TEST_NET_PLUGIN_RECORD", record.path().c_str(), 1);
        onTheDgxFixture(
            "/sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/0000:9a:00.0,"
            "/sys/devices/pci0000:15/0000:15:01.0/0000:16:01.0/0000:40:00.0,"
            "/sys/devices/virtual/net/braidtest");
      },
      ncclSuccess, sumOfOnes);
  expectEveryCommOnDevice(record, 1);
}

// A GPU communicator's all-reduce of ones on 2 ranks (emulated GPU), over a FIFO's slot, checked,
// then the communicator destroyed.
void gpuSumOfOnes(int, ncclComm_t comm) {
  const braidDeviceApi* gpu = braidGetDeviceApi();
  ASSERT_EQ(gpu->deviceCount(), 1) << "the emulated GPU did not come up";
  constexpr size_t kCount = 300001;
  void* data = nullptr;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(gpu->alloc(&data, kCount * sizeof(float)), ncclSuccess);
  ASSERT_EQ(gpu->streamCreate(&stream), ncclSuccess);
  std::vector<float> ones(kCount, 1.0f);
  ASSERT_EQ(gpu->copy(data, ones.data(), kCount * sizeof(float), stream), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(data, data, kCount, ncclFloat32, ncclSum, comm, stream), ncclSuccess)
      << ncclGetLastError(comm);
  std::vector<float> out(kCount, 0.0f);
  ASSERT_EQ(gpu->copy(out.data(), data, kCount * sizeof(float), stream), ncclSuccess);
  ASSERT_EQ(gpu->streamSynchronize(stream), ncclSuccess) << ncclGetLastError(comm);
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[kCount - 1], 2.0f);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  gpu->streamDestroy(stream);
  gpu->release(data);
}

TEST(NetPluginDevices, AGpuRankTakesTheDeviceBesideItsGpu) {
  Record record;
  twoHosts(
      [&](int) {
        setenv("BRAID_EMULATE_GPUS", "1", 1);
        setenv("NCCL_NET_PLUGIN", pluginPath("braidtest").c_str(), 1);
        setenv("BRAID_TEST_NET_PLUGIN_RECORD", record.path().c_str(), 1);
        onTheDgxFixture(kDevices);
      },
      ncclSuccess, gpuSumOfOnes);
  expectEveryCommOnDevice(record, 1);
}

// GPUDirect RDMA through a plugin (plugin_fifo.h): the GDR variant reports HOST|CUDA|DMABUF, the
// GPU sits beside its device on the fixture, so the GPU FIFOs' slots are in device memory and
// registered by dmabuf, the plugin moving their bytes through its mapping of the dmabuf; what
// lands is flushed because the device asks (forceFlush: the emulated GPU is a Hopper, where the
// rules alone would not).
void onGdrPlugin(const Record& record) {
  setenv("BRAID_EMULATE_GPUS", "1", 1);
  setenv("NCCL_NET_PLUGIN", pluginPath("braidtest-gdr").c_str(), 1);
  setenv("BRAID_TEST_NET_PLUGIN_RECORD", record.path().c_str(), 1);
  onTheDgxFixture(kDevices);
}

// gpuSumOfOnes on the GDR plugin with `variable` set to `value` on both ranks.
void gdrSumOfOnes(const Record& record, const char* variable, const char* value) {
  twoHosts(
      [&](int) {
        onGdrPlugin(record);
        setenv(variable, value, 1);
      },
      ncclSuccess, gpuSumOfOnes);
}

TEST(NetPluginGdr, GpuFifosRegisterTheirSlotsByDmabufAndFlushWhereTheDeviceAsks) {
  Record record;
  gdrSumOfOnes(record, "BRAID_TEST_NET_PLUGIN_FORCE_FLUSH", "1");
  expectEveryCommOnDevice(record, 1);
  const auto dmabufs = record.count("regMrDmaBuf ");
  EXPECT_GT(dmabufs.first, 0) << "no FIFO registered its slots by dmabuf";
  EXPECT_EQ(record.count("regMr cuda ").first, 0);
  const auto flushes = record.count("iflush ");
  EXPECT_GT(flushes.first, 0) << "nothing received into device memory was flushed";
  EXPECT_GT(flushes.second, 0) << "the flushes covered no byte";
}

TEST(NetPluginGdr, WithDmabufOffCudaPointersAreRegisteredAndAHopperDoesNotFlush) {
  Record record;
  gdrSumOfOnes(record, "NCCL_DMABUF_ENABLE", "0");
  EXPECT_GT(record.count("regMr cuda ").first, 0) << "no FIFO registered device pointers";
  EXPECT_EQ(record.count("regMrDmaBuf ").first, 0);
  EXPECT_EQ(record.count("iflush ").first, 0) << "a Hopper flushes only where asked";
}

// A plugin that claims DMABUF but fails to register one: the FIFO ends, and the call with it,
// naming the plugin and regMrDmaBuf.
TEST(NetPluginFailure, ARegMrDmaBufThatFailsIsAnAsyncErrorNamingIt) {
  Record record;
  twoHosts(
      [&](int rank) {
        onGdrPlugin(record);
        if (rank == 0) setenv("BRAID_TEST_NET_PLUGIN_FAIL_DMABUF", "1", 1);
        setenv("BRAID_TIMEOUT_MS", "60000", 1);
      },
      ncclSuccess,
      [](int rank, ncclComm_t comm) {
        expectAsyncErrorNaming(rank, comm, "regMrDmaBuf", /*atConnection=*/true);
      });
}

// NCCL_NET_GDR_READ=0: senders stage, receivers stay in device memory, and the two ends of each
// FIFO agree on how the slot's word travels (apart, as the receiver needs).
TEST(NetPluginGdr, StagedSendersAndDeviceReceiversAgree) {
  Record record;
  gdrSumOfOnes(record, "NCCL_NET_GDR_READ", "0");
  EXPECT_GT(record.count("regMrDmaBuf ").first, 0) << "no receiver registered its slots by dmabuf";
}

TEST(NetPluginGdr, AGpuFarFromTheDeviceStages) {
  Record record;
  gdrSumOfOnes(record, "NCCL_NET_GDR_LEVEL", "LOC");
  EXPECT_GT(record.count("sent ").second, 0);
  EXPECT_EQ(record.count("regMr cuda ").first, 0);
  EXPECT_EQ(record.count("regMrDmaBuf ").first, 0);
  EXPECT_EQ(record.count("iflush ").first, 0);
}

}  // namespace
