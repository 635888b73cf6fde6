// braid-perf: measures braid's collectives the way nccl-tests does, with the
// same flags and table, so results compare line by line with NCCL's.
//
// Ranks come from one of three places:
//   --procs N       this program forks N processes of this machine;
//   a launcher      mpirun (OMPI_COMM_WORLD_RANK/SIZE), srun (SLURM_PROCID,
//                   SLURM_NTASKS) or torchrun-style (RANK, WORLD_SIZE,
//                   MASTER_ADDR, MASTER_PORT): this process is one of them
//                   (perf/launch.cc finds the bootstrap root);
//   neither         this process alone.
// Each process runs -t threads; each thread drives -g ranks (nccl-tests' GPUs
// per thread) through groups over its communicators.
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "nccl.h"
#include "perf/launch.h"
#include "perf/options.h"
#include "perf/ranks.h"
#include "perf/runner.h"

namespace braid::perf {
namespace {

// Like mpirun's --bind-to core: when there is a core per rank, thread t (of
// nthreads, each driving ranksPerThread ranks) runs on its own ranksPerThread
// cores of those this process may use, so ranks do not migrate or share a
// core. The threads a group starts for the other ranks inherit that set.
void bindToCores(int thread, int nthreads, int ranksPerThread, bool allowed) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (!allowed || sched_getaffinity(0, sizeof(set), &set) != 0) return;
  if (nthreads * ranksPerThread > CPU_COUNT(&set)) return;
  cpu_set_t mine;
  CPU_ZERO(&mine);
  const int first = thread * ranksPerThread;
  int seen = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && seen < first + ranksPerThread; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    if (seen++ >= first) CPU_SET(cpu, &mine);
  }
  pthread_setaffinity_np(pthread_self(), sizeof(mine), &mine);
}

// The pid and device of every rank for the header, gathered with the
// collective itself; fills them on the thread that owns rank 0.
bool gatherRanks(ThreadRanks& ranks, std::vector<int>* pids, std::vector<int>* devices) {
  const int nranks = ranks.nranks();
  std::vector<std::vector<double>> tables(ranks.ranks().size(),
                                          std::vector<double>(2 * nranks, 0.0));
  for (size_t g = 0; g < tables.size(); ++g) {
    const Rank& r = ranks.ranks()[g];
    tables[g][r.rank] = getpid();
    tables[g][nranks + r.rank] = r.device;
  }
  if (!ranks.allReduceDoubles(&tables, ncclSum, "rank table")) return false;
  pids->assign(tables[0].begin(), tables[0].begin() + nranks);
  devices->assign(tables[0].begin() + nranks, tables[0].end());
  return true;
}

// -R 2: registers every rank's buffers as symmetric windows and sums, over the job, how many
// the library made NULL (it declined them: the header says so, and the calls run without).
bool countNullWindows(ThreadRanks& ranks, size_t bytes, int* nullWindows) {
  const int mine = ranks.registerWindows(bytes);
  if (mine < 0) return false;
  std::vector<std::vector<double>> counts(ranks.ranks().size(), std::vector<double>{0.0});
  counts[0][0] = mine;
  if (!ranks.allReduceDoubles(&counts, ncclSum, "window count")) return false;
  *nullWindows = static_cast<int>(counts[0][0]);
  return true;
}

// Runs this process's -t threads of -g ranks each; returns the process exit code.
int runProcess(const Options& o, const ncclUniqueId& id, int procRank, int nprocs, bool bind) {
  // nccl-tests' numbering: thread t of process p owns ranks
  // (p * threads + t) * gpus + g, g in [0, gpus).
  const int nthreads = nprocs * o.threads;
  const int nranks = nthreads * o.gpus;
  std::vector<int> codes(o.threads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t) {
    threads.emplace_back([&, t] {
      const int thread = procRank * o.threads + t;
      bindToCores(thread, nthreads, o.gpus, bind);
      ThreadRanks ranks(thread * o.gpus, o.gpus, nranks);
      if (!ranks.init(id)) {
        codes[t] = 2;
        return;
      }
      // The largest element is 8 bytes: room for a whole one past maxBytes.
      std::vector<int> pids, devices;
      if (!ranks.allocate(o.maxBytes + 8, o.memAlloc, o.symmetricWindows) ||
          !gatherRanks(ranks, &pids, &devices)) {
        codes[t] = 2;
        return;
      }
      int nullWindows = -1;
      if (o.symmetricWindows && !countNullWindows(ranks, o.maxBytes + 8, &nullWindows)) {
        codes[t] = 2;
        return;
      }
      // Each collective of the list in turn, a header and a table each, on these ranks.
      for (const std::string& collective : o.collectives) {
        Options one = o;
        one.collective = collective;
        one.nullWindows = nullWindows;
        if (ranks.leads()) printHeader(one, nranks, pids.data(), devices.data());
        const long long wrong = runBenchmark(one, ranks);
        codes[t] = std::max(codes[t], wrong < 0 ? 2 : wrong > 0 ? 1 : 0);
        if (wrong < 0) return;
      }
    });
  }
  for (auto& th : threads) th.join();
  int code = 0;
  for (int c : codes) code = std::max(code, c);
  return code;
}

/// ncclSetEncryption with the first line of `path`; false (having said why) when it fails.
bool setEncryptionFrom(const std::string& path) {
  std::ifstream file(path);
  std::string key;
  if (!file || !std::getline(file, key)) {
    fprintf(stderr, "braid-perf: cannot read a key from %s\n", path.c_str());
    return false;
  }
  ncclEncryptionConfig_t config = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  config.mode = NCCL_ENCRYPTION_MODE_PSK;
  config.psk = key.c_str();
  if (ncclSetEncryption(&config) != ncclSuccess) {
    fprintf(stderr, "braid-perf: ncclSetEncryption failed: %s\n", ncclGetLastError(nullptr));
    return false;
  }
  return true;
}

int runForked(const Options& o) {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) {
    fprintf(stderr, "braid-perf: ncclGetUniqueId failed: %s\n", ncclGetLastError(nullptr));
    return 2;
  }
  std::vector<pid_t> children;
  for (int p = 0; p < o.procs; ++p) {
    fflush(nullptr);
    pid_t pid = fork();
    if (pid < 0) {
      perror("braid-perf: fork");
      return 2;
    }
    if (pid == 0) _exit(runProcess(o, id, p, o.procs, o.bind));
    children.push_back(pid);
  }
  int code = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    int c = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
    if (c != 0) fprintf(stderr, "braid-perf: process %d exited with %d\n", pid, c);
    code = std::max(code, c);
  }
  return code;
}

}  // namespace
}  // namespace braid::perf

int main(int argc, char** argv) {
  using namespace braid::perf;
  Options o;
  if (!parseOptions(argc, argv, &o)) return 2;
  // Before the unique id, as NCCL asks: every connection from here on is sealed.
  if (!o.pskFile.empty() && !setEncryptionFrom(o.pskFile)) return 2;
  if (o.procs > 0) return runForked(o);
  LaunchInfo launch;
  std::string error;
  if (!detectLauncher(&launch, &error)) {
    fprintf(stderr, "braid-perf: %s\n", error.c_str());
    return 2;
  }
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) {
    fprintf(stderr, "braid-perf: ncclGetUniqueId failed: %s\n", ncclGetLastError(nullptr));
    return 2;
  }
  // Under a launcher, binding is the launcher's business (mpirun binds).
  return runProcess(o, id, launch.procRank, launch.nprocs, o.bind && !launch.launched);
}
