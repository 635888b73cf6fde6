// A hang made on purpose, for the flight recorder and braid-doctor (issue 14's fourth point).
//
// nranks processes make a communicator with BRAID_FLIGHT_RECORDER=<dir>, run a few calls they
// all make, and then every rank but `skipper` makes one more call while the skipper does not:
// the others wait inside it. Once they have waited a while, the test sends SIGUSR1 to every rank,
// waits for each rank's dump, and runs braid-doctor on the directory; then it lets the skipper
// make its call, so that every rank finishes and the processes exit cleanly.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "nccl.h"
#include "support/asleep.h"
#include "support/multiprocess.h"

namespace braid::testing {

/// A fresh, empty directory under /tmp for one test's dumps, removed with what it holds when
/// the process that made it is done with it (not by the ranks it forks, which copy it). A test
/// prints the dumps it needs in its failure messages.
class DumpDir {
 public:
  explicit DumpDir(const char* what) : owner_(getpid()) {
    char pattern[128];
    snprintf(pattern, sizeof(pattern), "/tmp/braid-%s-XXXXXX", what);
    const char* made = mkdtemp(pattern);
    if (made != nullptr) path_ = made;
  }
  ~DumpDir() {
    if (path_.empty() || getpid() != owner_) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  DumpDir(const DumpDir&) = delete;
  DumpDir& operator=(const DumpDir&) = delete;

  /// Empty where mkdtemp failed.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  pid_t owner_;
};

/// The files a directory holds whose names start with braid-flight-.
inline int countDumps(const std::string& dir) {
  const std::string command = "ls " + dir + " 2>/dev/null | grep -c '^braid-flight-.*txt$'";
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return 0;
  int n = 0;
  if (fscanf(p, "%d", &n) != 1) n = 0;
  pclose(p);
  return n;
}

/// What a command printed (stdout and stderr).
inline std::string runCommand(const std::string& command) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return "";
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  pclose(p);
  return out;
}

struct HangScenario {
  int nranks = 3;
  int skipper = 2;
  int warmup = 3;
  std::function<void(int rank)> beforeInit;
  std::function<ncclResult_t(ncclComm_t*, int nranks, const ncclUniqueId&, int rank)> init;
  /// One call every rank makes the same way (it returns when it is complete).
  std::function<ncclResult_t(ncclComm_t, int rank)> call;
};

/// Runs the scenario; returns braid-doctor's output on the dumps (empty on failure).
inline std::string runHangScenario(const HangScenario& s, const std::string& dir,
                                   const std::string& doctor) {
  ncclUniqueId id{};
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  struct Shared {
    std::atomic<int> inside;   // callers about to make the extra call
    std::atomic<int> release;  // the skipper may make it
    std::atomic<int> failed;
  };
  void* memory =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(memory, MAP_FAILED);
  if (memory == MAP_FAILED) return "";
  auto* shared = new (memory) Shared{};
  std::vector<pid_t> pids;
  StartGate gate;  // multiprocess.h: no fork while the id's root thread works
  EXPECT_TRUE(gate.ok());
  for (int rank = 0; rank < s.nranks; ++rank) {
    fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      gate.pass();
      setenv("BRAID_FLIGHT_RECORDER", dir.c_str(), 1);
      if (s.beforeInit) s.beforeInit(rank);
      ncclComm_t comm = nullptr;
      ncclResult_t r =
          s.init ? s.init(&comm, s.nranks, id, rank) : ncclCommInitRank(&comm, s.nranks, id, rank);
      for (int i = 0; r == ncclSuccess && i < s.warmup; ++i) r = s.call(comm, rank);
      if (rank == s.skipper) {
        shared->inside.fetch_add(1);
        while (r == ncclSuccess && shared->release.load() == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
      } else {
        shared->inside.fetch_add(1);
      }
      if (r == ncclSuccess) r = s.call(comm, rank);
      if (r != ncclSuccess) {
        fprintf(stderr, "rank %d: %s\n", rank, ncclGetLastError(comm));
        shared->failed.fetch_add(1);
      }
      if (comm != nullptr) (void)ncclCommDestroy(comm);
      _exit(r == ncclSuccess ? 0 : 1);
    }
    pids.push_back(pid);
  }
  gate.open();
  // The callers are in their extra call a moment after they said so: the signal goes once each
  // sleeps there, waiting for the skipper. One that spins instead (a real GPU's
  // cudaStreamSynchronize) is never seen asleep, and after 3 s of looking is taken as waiting:
  // its call was enqueued long before.
  const auto by = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (shared->inside.load() < s.nranks && std::chrono::steady_clock::now() < by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (int rank = 0; rank < s.nranks; ++rank) {
    if (rank == s.skipper) continue;
    (void)waitUntilAsleep(pids[rank], pids[rank], std::chrono::seconds(3));
  }
  for (pid_t pid : pids) kill(pid, SIGUSR1);
  while (countDumps(dir) < s.nranks && std::chrono::steady_clock::now() < by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(countDumps(dir), s.nranks) << "every rank dumps on SIGUSR1 into " << dir;
  const std::string diagnosis = runCommand(doctor + " " + dir);
  shared->release.store(1);
  for (size_t r = 0; r < pids.size(); ++r) {
    int status = 0;
    waitpid(pids[r], &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank " << r << " failed";
  }
  munmap(memory, sizeof(Shared));
  return diagnosis;
}

}  // namespace braid::testing
