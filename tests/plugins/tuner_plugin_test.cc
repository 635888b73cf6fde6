// Tuner plugins as NCCL loads them (src/tune/plugin): host communicators of ranks in processes,
// linked with libnccl.so.2 as a user's program is, loading the tuner plugin built beside this
// binary (tuner_plugin.cc). Each rank writes its stderr (the BRAID_DUMP_SCHEDULE listing and the
// INFO log) to a file of its own, which the test reads once the ranks are done:
//   - a v6 tuner, and a v2 one, that force the tree for a 1 MiB all_reduce, which braid's model
//     gives the ring (checked with NCCL_TUNER_PLUGIN=none): the dump shows the tree, the result
//     is right, and each rank initialized and finalized its context once;
//   - a tuner that sets the channel count: the schedule has that many channels, and no more than
//     the communicator's when it asks for more;
//   - a v6 tuner's getChunkSize: asked with braid's chunk, its answer cuts the schedule's chunks,
//     and one beyond what braid's FIFOs give a chunk is clamped, said at INFO;
//   - a tuner whose init fails: the communicator runs as without one, said at INFO;
//   - a tuner inside the network plugin's library (2 hosts by BRAID_HOSTID, NCCL_NET_PLUGIN):
//     found there when no tuner library opens;
//   - NCCL_TUNER_PLUGIN naming a library that is not there: "Could not find", and braid chooses.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nccl.h"
#include "support/multiprocess.h"

// Exported by braid (and by NVIDIA's library) but declared in no header: reads NCCL_DEBUG again.
extern "C" void ncclResetDebugInitInternal();

namespace {

constexpr int kRanks = 2;
constexpr size_t kCount = 256 * 1024;  // 1 MiB of floats: the ring's size in braid's model

std::string pluginDir() { return BRAID_TEST_PLUGIN_DIR; }

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// One run of the ranks: each sets `env` (name, value; an empty value unsets; BRAID_HOSTID gets
// the rank appended, a host per rank), logs at INFO
// with the schedule dumped to a file of its own, and runs one all_reduce of kCount floats,
// checking the sum. What the ranks wrote, and the tuner's record, are kept here.
using Env = std::vector<std::pair<std::string, std::string>>;

class RankRun {
 public:
  explicit RankRun(Env env) : env_(std::move(env)) {
    base_ = ::testing::TempDir() + "/braid-tuner-" + std::to_string(getpid()) + "-" +
            std::to_string(counter_++);
    std::remove(recordPath().c_str());
    ncclUniqueId id;
    EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
    braid::testing::runProcesses(kRanks, [&](int rank) { rankBody(id, rank); });
    for (int r = 0; r < kRanks; ++r) logs_ += readFile(logPath(r));
    record_ = readFile(recordPath());
  }
  ~RankRun() {
    for (int r = 0; r < kRanks; ++r) std::remove(logPath(r).c_str());
    std::remove(recordPath().c_str());
  }
  /// Every rank's stderr, one after another.
  const std::string& logs() const { return logs_; }
  /// The tuner plugin's record (BRAID_TEST_TUNER_RECORD).
  const std::string& record() const { return record_; }

 private:
  std::string logPath(int rank) const { return base_ + ".rank" + std::to_string(rank); }
  std::string recordPath() const { return base_ + ".record"; }

  void rankBody(const ncclUniqueId& id, int rank) {
    for (const auto& [name, value] : env_) {
      if (value.empty()) {
        unsetenv(name.c_str());
      } else if (name == "BRAID_HOSTID") {
        setenv(name.c_str(), (value + std::to_string(rank)).c_str(), 1);
      } else {
        setenv(name.c_str(), value.c_str(), 1);
      }
    }
    setenv("BRAID_TEST_TUNER_RECORD", recordPath().c_str(), 1);
    setenv("BRAID_DUMP_SCHEDULE", "1", 1);
    // Zero-copy, where the machine allows cross-memory copies, runs a call braid chose alone
    // with no schedule to dump; these tests read the schedules, so the FIFOs carry every call.
    setenv("BRAID_ZERO_COPY", "0", 1);
    setenv("NCCL_DEBUG", "INFO", 1);
    ncclResetDebugInitInternal();
    ASSERT_NE(freopen(logPath(rank).c_str(), "w", stderr), nullptr);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, kRanks, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    std::vector<float> data(kCount, static_cast<float>(rank + 1));
    const ncclResult_t result =
        ncclAllReduce(data.data(), data.data(), kCount, ncclFloat32, ncclSum, comm, nullptr);
    if (getenv("BRAID_TEST_TUNER_CHUNK_FAIL") != nullptr) {
      // The plugin's failure is the call's, as in NCCL; a rank whose peer failed first may see
      // that instead. The test reads which from the log.
      EXPECT_TRUE(result == ncclInternalError || result == ncclRemoteError) << result;
      fprintf(stderr, "call failed: %s\n", ncclGetLastError(comm));
      ncclCommAbort(comm);
      fflush(stderr);
      return;
    }
    ASSERT_EQ(result, ncclSuccess) << ncclGetLastError(nullptr);
    const float sum = kRanks * (kRanks + 1) / 2.0f;
    for (size_t i = 0; i < kCount; i += 4099) ASSERT_EQ(data[i], sum) << "element " << i;
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
    fflush(stderr);
  }

  static inline int counter_ = 0;
  Env env_;
  std::string base_;
  std::string logs_;
  std::string record_;
};

std::string tunerPath(const std::string& variant) {
  return pluginDir() + "/libnccl-tuner-" + variant + ".so";
}

// The dump's line for the all_reduce: "[rank R] ALGORITHM PROTOCOL schedule: ... N channel(s)".
std::string allReduceLines(const std::string& logs) {
  std::string out;
  std::istringstream in(logs);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("schedule: rank") != std::string::npos &&
        line.find("AllReduce") != std::string::npos) {
      out += line + "\n";
    }
  }
  return out;
}

TEST(TunerPlugin, WithoutOneTheModelGivesTheRing) {
  RankRun run(Env{{"NCCL_TUNER_PLUGIN", "none"}});
  const std::string lines = allReduceLines(run.logs());
  EXPECT_EQ(occurrences(lines, "] ring simple schedule"), size_t{kRanks}) << run.logs();
  EXPECT_EQ(occurrences(run.logs(), "NCCL_TUNER_PLUGIN set by environment to none"),
            size_t{kRanks});
  EXPECT_EQ(run.record(), "");
}

class ForcedTree : public ::testing::TestWithParam<std::string> {};

TEST_P(ForcedTree, TheDumpShowsTheTree) {
  const std::string variant = GetParam();
  RankRun run(Env{{"NCCL_TUNER_PLUGIN", tunerPath(variant)}, {"BRAID_TEST_TUNER_ALGO", "tree"}});
  const std::string lines = allReduceLines(run.logs());
  EXPECT_EQ(occurrences(lines, "] tree simple schedule"), size_t{kRanks}) << run.logs();
  const std::string version = variant == "braidtuner2" ? "v2" : "v6";
  EXPECT_EQ(occurrences(run.logs(), "TUNER/Plugin: Using braidtuner (" + version + ")"),
            size_t{kRanks});
  EXPECT_EQ(occurrences(run.logs(), "Successfully loaded external tuner plugin"), size_t{kRanks});
  EXPECT_EQ(occurrences(run.logs(), "TUNER/Plugin: Closing tuner: 'braidtuner'"), size_t{kRanks});
  EXPECT_EQ(occurrences(run.record(), "init " + version + " ranks 2 nodes 1"), size_t{kRanks})
      << run.record();
  EXPECT_EQ(occurrences(run.record(), "finalize " + version), size_t{kRanks});
  // ncclFuncAllReduce is 4; NCCL's nBytes is the buffer's size.
  EXPECT_GE(occurrences(run.record(), "call 4 bytes 1048576"), size_t{kRanks});
}

INSTANTIATE_TEST_SUITE_P(Versions, ForcedTree, ::testing::Values("braidtuner", "braidtuner2"));

TEST(TunerPlugin, SetsTheChannelCountWithinTheCommunicators) {
  RankRun baseline(Env{{"NCCL_TUNER_PLUGIN", "none"}, {"NCCL_NCHANNELS", "4"}});
  EXPECT_EQ(occurrences(allReduceLines(baseline.logs()), "4 channel(s)"), size_t{kRanks});
  RankRun two(Env{{"NCCL_TUNER_PLUGIN", tunerPath("braidtuner")},
                  {"NCCL_NCHANNELS", "4"},
                  {"BRAID_TEST_TUNER_CHANNELS", "2"}});
  EXPECT_EQ(occurrences(allReduceLines(two.logs()), "2 channel(s)"), size_t{kRanks}) << two.logs();
  RankRun many(Env{{"NCCL_TUNER_PLUGIN", tunerPath("braidtuner")},
                   {"NCCL_NCHANNELS", "4"},
                   {"BRAID_TEST_TUNER_CHANNELS", "64"}});
  EXPECT_EQ(occurrences(allReduceLines(many.logs()), "4 channel(s)"), size_t{kRanks})
      << many.logs();
}

// The chunk size the all_reduce's dump line gives ("chunks of up to N elements"); 0 if none.
size_t dumpedChunkElems(const std::string& lines) {
  const std::string mark = "chunks of up to ";
  const size_t at = lines.find(mark);
  return at == std::string::npos ? 0 : std::stoul(lines.substr(at + mark.size()));
}

TEST(TunerPlugin, GetChunkSizeCutsTheSchedulesChunks) {
  const std::string tuner = tunerPath("braidtuner");
  RankRun asked(Env{{"NCCL_TUNER_PLUGIN", tuner}});
  const size_t ours = dumpedChunkElems(allReduceLines(asked.logs()));
  ASSERT_GT(ours, size_t{16384}) << asked.logs();
  // Asked with braid's own chunk: ncclFuncAllReduce 4, NCCL_ALGO_RING 1, NCCL_PROTO_SIMPLE 2.
  EXPECT_GE(occurrences(asked.record(), "chunk 4 algo 1 proto 2 channels "), size_t{kRanks})
      << asked.record();
  EXPECT_GE(occurrences(asked.record(), " size " + std::to_string(ours * sizeof(float))),
            size_t{kRanks})
      << asked.record();

  RankRun smaller(Env{{"NCCL_TUNER_PLUGIN", tuner}, {"BRAID_TEST_TUNER_CHUNK", "65536"}});
  const std::string lines = allReduceLines(smaller.logs());
  EXPECT_EQ(occurrences(lines, "chunks of up to 16384 elements"), size_t{kRanks}) << lines;

  RankRun larger(Env{{"NCCL_TUNER_PLUGIN", tuner}, {"BRAID_TEST_TUNER_CHUNK", "1073741824"}});
  EXPECT_EQ(dumpedChunkElems(allReduceLines(larger.logs())), ours) << larger.logs();
  EXPECT_EQ(occurrences(larger.logs(), "TUNER/Plugin: chunk size 1073741824 exceeds"),
            size_t{kRanks})
      << larger.logs();
}

TEST(TunerPlugin, AFailedGetChunkSizeFailsTheCallNamingIt) {
  RankRun run(
      Env{{"NCCL_TUNER_PLUGIN", tunerPath("braidtuner")}, {"BRAID_TEST_TUNER_CHUNK_FAIL", "1"}});
  EXPECT_GE(occurrences(run.record(), "chunk 4 "), size_t{1}) << run.record();
  EXPECT_GE(occurrences(run.logs(), "call failed: "), size_t{kRanks}) << run.logs();
  EXPECT_GE(occurrences(run.logs(), "getChunkSize failed with result 3"), size_t{1}) << run.logs();
}

TEST(TunerPlugin, AFailedInitLeavesTheCommunicatorToChooseAlone) {
  RankRun run(Env{{"NCCL_TUNER_PLUGIN", tunerPath("braidtuner")},
                  {"BRAID_TEST_TUNER_ALGO", "tree"},
                  {"BRAID_TEST_TUNER_FAIL_INIT", "1"}});
  EXPECT_EQ(occurrences(allReduceLines(run.logs()), "] ring simple schedule"), size_t{kRanks})
      << run.logs();
  EXPECT_EQ(occurrences(run.logs(), "init failed with result 3; choosing algorithms without it"),
            size_t{kRanks})
      << run.logs();
  EXPECT_EQ(run.record(), "");
}

TEST(TunerPlugin, AMissingLibraryIsSaidAndBraidChooses) {
  RankRun run(Env{{"NCCL_TUNER_PLUGIN", "nosuchtuner"}, {"BRAID_TEST_TUNER_ALGO", "tree"}});
  EXPECT_EQ(occurrences(run.logs(),
                        "TUNER/Plugin: Could not find: nosuchtuner libnccl-tuner-nosuchtuner.so"),
            size_t{kRanks})
      << run.logs();
  EXPECT_EQ(occurrences(allReduceLines(run.logs()), "] ring simple schedule"), size_t{kRanks});
}

// Two hosts by BRAID_HOSTID, so that the network plugin carries the ranks' traffic and the
// communicator holds its library; no tuner library on the library path.
TEST(TunerPlugin, FoundInsideTheNetworkPluginsLibrary) {
  RankRun run(Env{{"NCCL_TUNER_PLUGIN", ""},
                  {"NCCL_NET_PLUGIN", pluginDir() + "/libnccl-net-braidtest-tuner.so"},
                  {"BRAID_HOSTID", "tuner-host-"},
                  {"BRAID_TEST_TUNER_ALGO", "tree"}});
  EXPECT_EQ(occurrences(run.logs(), "TUNER/Plugin: Could not find: libnccl-tuner.so"),
            size_t{kRanks})
      << run.logs();
  EXPECT_EQ(occurrences(run.logs(), "TUNER/Plugin: Using braidtuner (v6)"), size_t{kRanks});
  EXPECT_EQ(occurrences(allReduceLines(run.logs()), "] tree simple schedule"), size_t{kRanks})
      << run.logs();
  EXPECT_EQ(occurrences(run.record(), "init v6 ranks 2 nodes 2"), size_t{kRanks}) << run.record();
}

}  // namespace
