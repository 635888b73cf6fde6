// braid-perf: measures braid's collectives the way nccl-tests does, with the
// same flags and table, so results compare line by line with NCCL's.
//
// Ranks come from one of three places:
//   --procs N       this program forks N processes of this machine;
//   a launcher      mpirun (OMPI_COMM_WORLD_RANK/SIZE) or torchrun-style
//                   (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT): this
//                   process is one of them;
//   neither         this process alone.
// Each process runs -t ranks, one thread each.
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "nccl.h"
#include "perf/data.h"
#include "perf/launch.h"
#include "perf/options.h"
#include "perf/runner.h"

namespace braid::perf {
namespace {

// Like mpirun's --bind-to core: when there is a core per rank, rank r runs on
// the r-th core this process may use, so ranks do not migrate or share a core.
void bindToCore(int rank, int nranks, bool allowed) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (!allowed || sched_getaffinity(0, sizeof(set), &set) != 0) return;
  if (nranks > CPU_COUNT(&set)) return;
  int seen = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    if (seen++ == rank) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
      return;
    }
  }
}

// Runs this process's -t ranks; returns the process exit code.
int runProcess(const Options& o, const ncclUniqueId& id, int procRank, int nprocs,
               bool bind) {
  const int nranks = nprocs * o.threads;
  std::vector<int> codes(o.threads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t) {
    threads.emplace_back([&, t] {
      RankContext ctx;
      ctx.rank = procRank * o.threads + t;
      ctx.nranks = nranks;
      bindToCore(ctx.rank, nranks, bind);
      ncclResult_t r = ncclCommInitRank(&ctx.comm, nranks, id, ctx.rank);
      if (r != ncclSuccess) {
        fprintf(stderr, "braid-perf: rank %d: ncclCommInitRank failed: %s (%s)\n", ctx.rank,
                ncclGetErrorString(r), ncclGetLastError(nullptr));
        codes[t] = 2;
        return;
      }
      // The pid table for the header, gathered with the collective itself.
      std::vector<double> pids(nranks, 0.0);
      pids[ctx.rank] = getpid();
      if (ncclAllReduce(pids.data(), pids.data(), nranks, ncclFloat64, ncclSum, ctx.comm,
                        nullptr) != ncclSuccess) {
        codes[t] = 2;
      } else {
        if (ctx.rank == 0) {
          std::vector<int> ipids(pids.begin(), pids.end());
          printHeader(o, nranks, ipids.data());
        }
        long long wrong = runBenchmark(o, ctx);
        codes[t] = wrong < 0 ? 2 : wrong > 0 ? 1 : 0;
      }
      ncclCommDestroy(ctx.comm);
    });
  }
  for (auto& th : threads) th.join();
  int code = 0;
  for (int c : codes) code = std::max(code, c);
  return code;
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
  if (!typeSupported(o.type)) {
    fprintf(stderr, "braid-perf: datatype %s is not supported yet\n", typeName(o.type));
    return 2;
  }
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
