// Profiler plugins (src/profiler, docs/profiling.md): 4 ranks as processes on 2 hosts
// (BRAID_HOSTID per pair: shared memory within a host, sockets between them), linked with
// libnccl.so.2 as a user's program is, NCCL_PROFILER_PLUGIN naming the counting plugin built
// beside this binary (profiler_counting_plugin.cc), whose v6, v4 and v1 tables are each a library
// of their own. Every rank runs the same calls (ungrouped collectives, a group of two, a group of
// a send and a receive) and the plugin's record says what each rank's communicator saw: every
// call's start and stop exactly once, groups wrapping their calls, the fields of each call in the
// version's words, proxy ops and steps from the socket proxies, every stop of a handle started.
// Then what must not break a communicator: a plugin whose init fails, and a plugin that is not
// there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "braid_ext.h"
#include "nccl.h"
#include "support/multiprocess.h"

namespace {

constexpr int kRanks = 4;

std::string pluginPath(const std::string& variant) {
  return std::string(BRAID_TEST_PLUGIN_DIR) + "/libnccl-profiler-" + variant + ".so";
}

// The plugin's record: a file of this test's own, removed when it goes.
class Record {
 public:
  Record() : path_("/tmp/braid-profiler-record-" + std::to_string(getpid())) {
    std::remove(path_.c_str());
  }
  ~Record() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }
  std::vector<std::string> lines(const std::string& prefix) const {
    std::ifstream in(path_);
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(prefix, 0) == 0) out.push_back(line);
    }
    return out;
  }

 private:
  std::string path_;
};

// "finalize v=6 rank=0 group=6/6 ..." as a map of its words; "a/b" counts kept as written.
std::map<std::string, std::string> words(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string word;
  while (in >> word) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

// "6/6" -> {6, 6}; absent -> {0, 0}.
std::pair<int, int> startsStops(const std::map<std::string, std::string>& w, const char* type) {
  auto it = w.find(type);
  if (it == w.end()) return {0, 0};
  const size_t slash = it->second.find('/');
  return {std::stoi(it->second.substr(0, slash)), std::stoi(it->second.substr(slash + 1))};
}

// The calls every rank makes, checking their results: three all-reduces alone, a group of an
// all-reduce and a broadcast, a group of a send to the next rank and a receive from the previous
// one, an all-gather alone. Six groups, six collectives, two point-to-point events.
void runCalls(int rank, ncclComm_t comm) {
  std::vector<float> data(1000);
  for (int i = 0; i < 3; ++i) {
    std::fill(data.begin(), data.end(), 1.0f);
    ASSERT_EQ(
        ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr),
        ncclSuccess)
        << ncclGetLastError(comm);
    ASSERT_EQ(data[999], float{kRanks});
  }
  std::vector<int32_t> bcast(500, rank);
  std::fill(data.begin(), data.end(), 2.0f);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(
      ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr),
      ncclSuccess);
  ASSERT_EQ(
      ncclBroadcast(bcast.data(), bcast.data(), bcast.size(), ncclInt32, kRanks - 1, comm, nullptr),
      ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comm);
  EXPECT_EQ(data[0], 2.0f * kRanks);
  EXPECT_EQ(bcast[499], kRanks - 1);
  std::vector<float> out(100, float(rank)), in(100, -1.0f);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclSend(out.data(), out.size(), ncclFloat32, (rank + 1) % kRanks, comm, nullptr),
            ncclSuccess);
  ASSERT_EQ(
      ncclRecv(in.data(), in.size(), ncclFloat32, (rank + kRanks - 1) % kRanks, comm, nullptr),
      ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comm);
  EXPECT_EQ(in[99], float((rank + kRanks - 1) % kRanks));
  std::vector<int8_t> mine(200, static_cast<int8_t>(rank)), all(200 * kRanks, -1);
  ASSERT_EQ(ncclAllGather(mine.data(), all.data(), mine.size(), ncclInt8, comm, nullptr),
            ncclSuccess)
      << ncclGetLastError(comm);
  EXPECT_EQ(all[200 * kRanks - 1], kRanks - 1);
}

// Runs runCalls on 4 ranks on 2 hosts with `plugin` (and `extra` set in each rank's
// environment), each rank's log at INFO into a file of its own (logOf).
void runRanks(const std::string& plugin, const Record& record,
              const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  setenv("BRAID_DEBUG", "INFO", 1);
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runProcesses(kRanks, [&](int rank) {
    setenv("BRAID_HOSTID", rank < kRanks / 2 ? "profiler-host-a" : "profiler-host-b", 1);
    setenv("NCCL_PROFILER_PLUGIN", plugin.c_str(), 1);
    setenv("BRAID_TEST_PROFILER_OUT", record.path().c_str(), 1);
    for (const auto& [name, value] : extra) setenv(name.c_str(), value.c_str(), 1);
    const std::string log = record.path() + ".log." + std::to_string(rank);
    ASSERT_NE(freopen(log.c_str(), "w", stderr), nullptr);
    setvbuf(stderr, nullptr, _IONBF, 0);  // the child ends with _exit, which flushes nothing
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, kRanks, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    runCalls(rank, comm);
    ASSERT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

// Rank `rank`'s log of the last runRanks, removed as it is read.
std::string logOf(const Record& record, int rank) {
  const std::string path = record.path() + ".log." + std::to_string(rank);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  return text.str();
}

// What every version's record must say of every rank: each call's start and stop once, groups
// around them, every stop of a started handle, and proxy ops and steps from the proxies.
void expectEveryCallOnce(const Record& record, int version) {
  const std::vector<std::string> finals = record.lines("finalize ");
  ASSERT_EQ(finals.size(), size_t{kRanks}) << "one finalize per communicator";
  std::set<std::string> ranks;
  for (const std::string& line : finals) {
    SCOPED_TRACE(line);
    const auto w = words(line);
    ranks.insert(w.at("rank"));
    EXPECT_EQ(w.at("v"), std::to_string(version));
    EXPECT_EQ(w.at("inits"), "1") << "one communicator per process, one init";
    EXPECT_EQ(startsStops(w, "group"), std::make_pair(6, 6));
    EXPECT_EQ(startsStops(w, "coll"), std::make_pair(6, 6));
    EXPECT_EQ(startsStops(w, "p2p"), std::make_pair(2, 2));
    const auto ops = startsStops(w, "proxyOp");
    EXPECT_GT(ops.first, 0) << "the socket proxies carried slots between the hosts";
    EXPECT_EQ(ops.first, ops.second);
    const auto steps = startsStops(w, "proxyStep");
    EXPECT_GT(steps.first, 0);
    EXPECT_EQ(steps.first, steps.second);
    EXPECT_EQ(w.at("steps"), std::to_string(steps.first)) << "a state for every step";
    if (version >= 4) EXPECT_NE(w.at("stepBytes"), "0");
    for (const char* zero :
         {"badStops", "outsideGroup", "groupStoppedEarly", "orphanSteps", "orphanOps",
          "unknownTypes", "orphanApis", "orphanCalls", "badGroupStates"}) {
      EXPECT_EQ(w.at(zero), "0") << zero;
    }
    // The API events (v5 on): a group API event per group or lone call, a call API event per
    // call made, each the parent of its call's event.
    const int apis = version >= 5 ? 1 : 0;
    EXPECT_EQ(startsStops(w, "groupApi"), std::make_pair(6 * apis, 6 * apis));
    EXPECT_EQ(startsStops(w, "collApi"), std::make_pair(6 * apis, 6 * apis));
    EXPECT_EQ(startsStops(w, "p2pApi"), std::make_pair(2 * apis, 2 * apis));
    EXPECT_EQ(w.at("apiParented"), std::to_string(8 * apis));
  }
  EXPECT_EQ(ranks.size(), size_t{kRanks}) << "every rank's communicator reported";
}

TEST(ProfilerPlugin, V6SeesEveryCallOnceWithItsFields) {
  Record record;
  runRanks(pluginPath("braidcount"), record);
  expectEveryCallOnce(record, 6);
  // Per rank: AllReduce 0..3, Broadcast 0, AllGather 0, in the order they ran.
  const std::vector<std::string> colls = record.lines("coll ");
  ASSERT_EQ(colls.size(), size_t{6 * kRanks});
  int allReduces = 0;
  for (const std::string& line : colls) {
    SCOPED_TRACE(line);
    const auto w = words(line);
    if (w.at("func") == "AllReduce") {
      EXPECT_EQ(w.at("seq"), std::to_string(allReduces++ % 4));
      EXPECT_EQ(w.at("count"), "1000");
      EXPECT_EQ(w.at("datatype"), "ncclFloat32");
    } else if (w.at("func") == "Broadcast") {
      EXPECT_EQ(w.at("seq"), "0");
      EXPECT_EQ(w.at("count"), "500");
      EXPECT_EQ(w.at("root"), std::to_string(kRanks - 1));
      EXPECT_EQ(w.at("datatype"), "ncclInt32");
    } else {
      EXPECT_EQ(w.at("func"), "AllGather");
      EXPECT_EQ(w.at("seq"), "0");
      EXPECT_EQ(w.at("count"), "200");
      EXPECT_EQ(w.at("datatype"), "ncclInt8");
    }
    EXPECT_TRUE(w.at("algo") == "RING" || w.at("algo") == "TREE") << "across hosts";
    EXPECT_EQ(w.at("proto"), "SIMPLE") << "the only protocol across hosts";
  }
  EXPECT_EQ(allReduces, 4 * kRanks);
  // Each rank's call lines come before its finalize line: a send to the next rank, a receive
  // from the previous one.
  int sends = 0, recvs = 0;
  std::vector<std::string> pending;
  for (const std::string& line : record.lines("")) {
    if (line.rfind("p2p ", 0) == 0) pending.push_back(line);
    if (line.rfind("finalize ", 0) != 0) continue;
    const int rank = std::stoi(words(line).at("rank"));
    for (const std::string& p2p : pending) {
      SCOPED_TRACE(p2p);
      const auto w = words(p2p);
      EXPECT_EQ(w.at("count"), "100");
      EXPECT_EQ(w.at("datatype"), "ncclFloat32");
      if (w.at("func") == "Send") {
        ++sends;
        EXPECT_EQ(w.at("peer"), std::to_string((rank + 1) % kRanks));
      } else {
        ++recvs;
        EXPECT_EQ(w.at("func"), "Recv");
        EXPECT_EQ(w.at("peer"), std::to_string((rank + kRanks - 1) % kRanks));
      }
    }
    pending.clear();
  }
  EXPECT_EQ(sends, kRanks);
  EXPECT_EQ(recvs, kRanks);
  const std::string log = logOf(record, 0);
  EXPECT_NE(log.find("PROFILER/Plugin: Loaded braidcount (v6)"), std::string::npos) << log;
  EXPECT_NE(log.find("Successfully loaded external profiler plugin"), std::string::npos) << log;
  EXPECT_NE(log.find("Profiler event mask: 0x1f (31) - Enabled: Group Coll P2p ProxyOp ProxyStep"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("PROFILER/Plugin: Closing profiler plugin braidcount"), std::string::npos)
      << log;
  for (int r = 1; r < kRanks; ++r) logOf(record, r);
}

// The network plugin's pumps (transport/net/plugin) report their proxy ops and steps too: several
// slots in flight at once, each a step of its own; and the plugin's own events, through the
// profiler callback its v12 table is given, each transfer an event under its step (a send's) or
// under none (a receive's, posted ahead of its step), updated with its bytes once done.
TEST(ProfilerPlugin, ANetworkPluginsPumpsReportProxyOpsAndSteps) {
  Record record;
  const std::string net = std::string(BRAID_TEST_PLUGIN_DIR) + "/libnccl-net-braidtest.so";
  runRanks(pluginPath("braidcount"), record,
           {{"NCCL_NET_PLUGIN", net}, {"BRAID_TEST_PROFILER_MASK", "0x9f"}});
  expectEveryCallOnce(record, 6);
  for (const std::string& line : record.lines("finalize ")) {
    SCOPED_TRACE(line);
    const auto w = words(line);
    const auto events = startsStops(w, "netPlugin");
    EXPECT_GT(events.first, 0) << "the plugin's callback started events";
    EXPECT_EQ(events.first, events.second);
    // Each transfer done is updated once; receives posted ahead that nothing filled are stopped
    // as their comm closes, without one.
    EXPECT_GT(std::stoi(w.at("netUpdates")), 0);
    EXPECT_LE(std::stoi(w.at("netUpdates")), events.first);
    EXPECT_EQ(w.at("orphanNet"), "0");
  }
  const std::string log = logOf(record, 0);
  EXPECT_NE(log.find("NET plugin braidtest"), std::string::npos) << "the plugin carried them";
  for (int r = 1; r < kRanks; ++r) logOf(record, r);
}

// The verbs proxy (transport/net/ib, over the emulated HCA) reports its proxy ops and steps: a
// send's step from its RDMA write's post to its completion, a receive's as its slot lands.
TEST(ProfilerPlugin, TheVerbsProxyReportsProxyOpsAndSteps) {
  Record record;
  runRanks(pluginPath("braidcount"), record, {{"BRAID_IB_EMULATE", "1"}, {"NCCL_NET", "IB"}});
  expectEveryCallOnce(record, 6);
  const std::string log = logOf(record, 0);
  EXPECT_NE(log.find("network: verbs transport"), std::string::npos) << log;
  for (int r = 1; r < kRanks; ++r) logOf(record, r);
}

// v4 plugins take a collective's group as its parent and strings for its fields.
TEST(ProfilerPlugin, V4SeesEveryCallOnce) {
  Record record;
  runRanks(pluginPath("braidcount4"), record);
  expectEveryCallOnce(record, 4);
  for (const std::string& line : record.lines("coll ")) {
    const auto w = words(line);
    EXPECT_TRUE(w.at("func") == "AllReduce" || w.at("func") == "Broadcast" ||
                w.at("func") == "AllGather")
        << line;
  }
  for (int r = 0; r < kRanks; ++r) logOf(record, r);
}

// v1 plugins take numbers: ncclFunc_t, ncclDataType_t, NCCL_ALGO_*, NCCL_PROTO_*.
TEST(ProfilerPlugin, V1SeesEveryCallOnceInNumbers) {
  Record record;
  runRanks(pluginPath("braidcount1"), record);
  expectEveryCallOnce(record, 1);
  std::map<std::string, int> funcs;
  for (const std::string& line : record.lines("coll ")) {
    SCOPED_TRACE(line);
    const auto w = words(line);
    ++funcs[w.at("func")];
    const std::string& func = w.at("func");
    // ncclFuncAllReduce 4 on ncclFloat32 7, ncclFuncBroadcast 0 on ncclInt32 2, ncclFuncAllGather
    // 2 on ncclInt8 0.
    EXPECT_EQ(w.at("datatype"), func == "4" ? "7" : func == "0" ? "2" : "0");
    EXPECT_TRUE(w.at("algo") == "0" || w.at("algo") == "1") << "NCCL_ALGO_TREE or _RING";
    EXPECT_EQ(w.at("proto"), "2") << "NCCL_PROTO_SIMPLE";
  }
  EXPECT_EQ(funcs["4"], 4 * kRanks);
  EXPECT_EQ(funcs["0"], kRanks);
  EXPECT_EQ(funcs["2"], kRanks);
  for (const std::string& line : record.lines("p2p ")) {
    const auto w = words(line);
    EXPECT_TRUE(w.at("func") == "6" || w.at("func") == "7") << "ncclFuncSend or Recv: " << line;
    EXPECT_EQ(w.at("datatype"), "7") << line;
  }
  for (int r = 0; r < kRanks; ++r) logOf(record, r);
}

// The mask is the plugin's: asking for collectives alone starts their groups (their parents)
// and nothing of the proxies.
TEST(ProfilerPlugin, AMaskOfCollectivesAloneStartsNoProxyEvent) {
  Record record;
  runRanks(pluginPath("braidcount"), record, {{"BRAID_TEST_PROFILER_MASK", "2"}});
  const std::vector<std::string> finals = record.lines("finalize ");
  ASSERT_EQ(finals.size(), size_t{kRanks});
  for (const std::string& line : finals) {
    SCOPED_TRACE(line);
    const auto w = words(line);
    EXPECT_EQ(startsStops(w, "group"), std::make_pair(6, 6));
    EXPECT_EQ(startsStops(w, "coll"), std::make_pair(6, 6));
    EXPECT_EQ(startsStops(w, "p2p"), std::make_pair(0, 0));
    EXPECT_EQ(startsStops(w, "proxyOp"), std::make_pair(0, 0));
    EXPECT_EQ(startsStops(w, "proxyStep"), std::make_pair(0, 0));
  }
  for (int r = 0; r < kRanks; ++r) logOf(record, r);
}

// Communicators of one process share the plugin: loaded once, an init and a finalize each,
// closed with the last.
TEST(ProfilerPlugin, CommunicatorsOfOneProcessShareThePlugin) {
  Record record;
  setenv("BRAID_DEBUG", "INFO", 1);
  braid::testing::runProcesses(1, [&](int) {
    setenv("NCCL_PROFILER_PLUGIN", pluginPath("braidcount").c_str(), 1);
    setenv("BRAID_TEST_PROFILER_OUT", record.path().c_str(), 1);
    const std::string log = record.path() + ".log.0";
    ASSERT_NE(freopen(log.c_str(), "w", stderr), nullptr);
    setvbuf(stderr, nullptr, _IONBF, 0);
    ncclComm_t comms[2] = {};
    ASSERT_EQ(ncclCommInitAll(comms, 2, nullptr), ncclSuccess) << ncclGetLastError(nullptr);
    std::vector<float> data[2] = {std::vector<float>(64, 1.0f), std::vector<float>(64, 2.0f)};
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < 2; ++r) {
      ASSERT_EQ(ncclAllReduce(data[r].data(), data[r].data(), 64, ncclFloat32, ncclSum, comms[r],
                              nullptr),
                ncclSuccess);
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
    EXPECT_EQ(data[1][63], 3.0f);
    for (ncclComm_t comm : comms) ASSERT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
  const std::vector<std::string> finals = record.lines("finalize ");
  ASSERT_EQ(finals.size(), size_t{2});
  for (const std::string& line : finals) {
    SCOPED_TRACE(line);
    const auto w = words(line);
    EXPECT_EQ(w.at("inits"), "2") << "one library, an init per communicator";
    EXPECT_EQ(startsStops(w, "group"), std::make_pair(1, 1));
    EXPECT_EQ(startsStops(w, "coll"), std::make_pair(1, 1));
    EXPECT_EQ(w.at("badStops"), "0");
  }
  const std::string log = logOf(record, 0);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("Successfully loaded external profiler plugin"), 1u) << log;
  EXPECT_EQ(count("Closing profiler plugin braidcount"), 1u) << log;
}

// A plugin that asks for nothing gets nothing: init and finalize, no event at all.
TEST(ProfilerPlugin, AnEmptyMaskStartsNoEvent) {
  Record record;
  runRanks(pluginPath("braidcount"), record, {{"BRAID_TEST_PROFILER_MASK", "0"}});
  const std::vector<std::string> finals = record.lines("finalize ");
  ASSERT_EQ(finals.size(), size_t{kRanks});
  for (const std::string& line : finals) {
    SCOPED_TRACE(line);
    const auto w = words(line);
    for (const char* type : {"group", "coll", "p2p", "proxyOp", "proxyStep"}) {
      EXPECT_EQ(startsStops(w, type), std::make_pair(0, 0)) << type;
    }
  }
  EXPECT_TRUE(record.lines("coll ").empty());
  for (int r = 0; r < kRanks; ++r) logOf(record, r);
}

TEST(ProfilerPlugin, APluginWhoseInitFailsLeavesTheCommunicatorWorking) {
  Record record;
  runRanks(pluginPath("braidcount-failing"), record);
  EXPECT_TRUE(record.lines("finalize ").empty()) << "a plugin whose init failed is not finalized";
  for (int r = 0; r < kRanks; ++r) {
    const std::string log = logOf(record, r);
    EXPECT_NE(log.find("Profiler init failed with error '3': Operation not supported. Continue "
                       "without profiler."),
              std::string::npos)
        << log;
  }
}

TEST(ProfilerPlugin, APluginThatIsNotThereLeavesTheCommunicatorWorking) {
  Record record;
  runRanks("/nonexistent/libnccl-profiler-x.so", record);
  for (int r = 0; r < kRanks; ++r) {
    const std::string log = logOf(record, r);
    EXPECT_NE(log.find("NCCL_PROFILER_PLUGIN set by environment to /nonexistent/"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("PROFILER/Plugin: Could not find: /nonexistent/libnccl-profiler-x.so"),
              std::string::npos)
        << log;
  }
}

TEST(ProfilerPlugin, ANameIsTriedAsLibncclProfilerName) {
  Record record;
  runRanks("nosuchprofiler", record);
  const std::string log = logOf(record, 0);
  EXPECT_NE(log.find("PROFILER/Plugin: Could not find: nosuchprofiler "
                     "libnccl-profiler-nosuchprofiler.so"),
            std::string::npos)
      << log;
  for (int r = 1; r < kRanks; ++r) logOf(record, r);
}

// Two emulated-GPU ranks, on one host (acrossHosts false: a rank per device) or on two
// (BRAID_HOSTID, sockets between them), run three all-reduces, a group of two and a group of a
// send and a receive, checking the results; the record says what each rank saw.
void runGpuRanks(const Record& record, bool acrossHosts, const char* mask = nullptr) {
  setenv("BRAID_DEBUG", "INFO", 1);
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runProcesses(2, [&](int rank) {
    setenv("BRAID_EMULATE_GPUS", "2", 1);
    if (acrossHosts) setenv("BRAID_HOSTID", rank == 0 ? "gpu-host-a" : "gpu-host-b", 1);
    setenv("NCCL_PROFILER_PLUGIN", pluginPath("braidcount").c_str(), 1);
    setenv("BRAID_TEST_PROFILER_OUT", record.path().c_str(), 1);
    if (mask != nullptr) setenv("BRAID_TEST_PROFILER_MASK", mask, 1);
    const braidDeviceApi* dev = braidGetDeviceApi();
    ASSERT_TRUE(dev->emulated);
    ASSERT_EQ(dev->setDevice(rank), ncclSuccess);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, 2, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(dev->streamCreate(&stream), ncclSuccess);
    std::vector<float> host(1000, 1.0f);
    void* a = nullptr;
    void* b = nullptr;
    ASSERT_EQ(dev->alloc(&a, host.size() * sizeof(float)), ncclSuccess);
    ASSERT_EQ(dev->alloc(&b, host.size() * sizeof(float)), ncclSuccess);
    ASSERT_EQ(dev->copy(a, host.data(), host.size() * sizeof(float), stream), ncclSuccess);
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(ncclAllReduce(a, b, host.size(), ncclFloat32, ncclSum, comm, stream), ncclSuccess);
    }
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    ASSERT_EQ(ncclAllReduce(a, b, host.size(), ncclFloat32, ncclSum, comm, stream), ncclSuccess);
    ASSERT_EQ(ncclAllReduce(b, b, host.size(), ncclFloat32, ncclSum, comm, stream), ncclSuccess);
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comm);
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    ASSERT_EQ(ncclSend(a, 100, ncclFloat32, 1 - rank, comm, stream), ncclSuccess);
    ASSERT_EQ(ncclRecv(b, 100, ncclFloat32, 1 - rank, comm, stream), ncclSuccess);
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comm);
    ASSERT_EQ(dev->copy(host.data(), b, host.size() * sizeof(float), stream), ncclSuccess);
    ASSERT_EQ(dev->streamSynchronize(stream), ncclSuccess);
    EXPECT_EQ(host[0], 1.0f) << "received from the peer's a";
    EXPECT_EQ(host[999], 4.0f) << "(1 + 1) summed again over 2 ranks";
    dev->release(a);
    dev->release(b);
    dev->streamDestroy(stream);
    ASSERT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

// What both ranks of runGpuRanks saw: every call once, sequence numbers 0 to 4.
void expectGpuCallsOnce(const Record& record) {
  const std::vector<std::string> finals = record.lines("finalize ");
  ASSERT_EQ(finals.size(), size_t{2});
  for (const std::string& line : finals) {
    SCOPED_TRACE(line);
    const auto w = words(line);
    EXPECT_EQ(startsStops(w, "group"), std::make_pair(5, 5));
    EXPECT_EQ(startsStops(w, "coll"), std::make_pair(5, 5));
    EXPECT_EQ(startsStops(w, "p2p"), std::make_pair(2, 2));
    for (const char* zero :
         {"badStops", "outsideGroup", "groupStoppedEarly", "orphanSteps", "orphanOps",
          "unknownTypes", "orphanApis", "orphanCalls", "badGroupStates"}) {
      EXPECT_EQ(w.at(zero), "0") << zero;
    }
    EXPECT_EQ(startsStops(w, "groupApi"), std::make_pair(5, 5));
    EXPECT_EQ(startsStops(w, "collApi"), std::make_pair(5, 5));
    EXPECT_EQ(startsStops(w, "p2pApi"), std::make_pair(2, 2));
    EXPECT_EQ(w.at("apiParented"), "7");
  }
  std::vector<std::string> seqs;
  for (const std::string& line : record.lines("coll ")) seqs.push_back(words(line).at("seq"));
  EXPECT_EQ(seqs, (std::vector<std::string>{"0", "1", "2", "3", "4", "0", "1", "2", "3", "4"}));
}

// A GPU communicator: the calls' events come from the same dispatcher, and a group's event
// ends once its launch is made.
TEST(ProfilerPlugin, AGpuCommunicatorSeesEveryCallOnce) {
  Record record;
  runGpuRanks(record, /*acrossHosts=*/false);
  expectGpuCallsOnce(record);
}

// A plugin that asks for kernel launches gets one under each group API event at least (a
// group's calls that cannot share a kernel launch apart), each parented to the running group
// API event (the counting plugin checks it: orphanApis).
TEST(ProfilerPlugin, AGpuCommunicatorsKernelLaunchesComeUnderTheirGroupApiEvent) {
  Record record;
  runGpuRanks(record, /*acrossHosts=*/false, /*mask=Group..ProxyStep, KernelLaunch*/ "0x81f");
  expectGpuCallsOnce(record);
  for (const std::string& line : record.lines("finalize ")) {
    SCOPED_TRACE(line);
    const auto launches = startsStops(words(line), "kernelLaunch");
    EXPECT_GE(launches.first, 5);
    EXPECT_EQ(launches.first, launches.second);
  }
}

// Across hosts, a GPU communicator's socket proxies (transport/net/socket/gpu_socket_fifo.cc)
// report their ops and steps too.
TEST(ProfilerPlugin, AGpuCommunicatorsSocketProxiesReportOpsAndSteps) {
  Record record;
  runGpuRanks(record, /*acrossHosts=*/true);
  expectGpuCallsOnce(record);
  for (const std::string& line : record.lines("finalize ")) {
    SCOPED_TRACE(line);
    const auto w = words(line);
    const auto ops = startsStops(w, "proxyOp");
    EXPECT_GT(ops.first, 0);
    EXPECT_EQ(ops.first, ops.second);
    const auto steps = startsStops(w, "proxyStep");
    EXPECT_GT(steps.first, 0);
    EXPECT_EQ(steps.first, steps.second);
  }
}

}  // namespace
