// The soak's ranks as forked processes or as one rank of a launcher's job (launcher.h).
#include "soak/launcher.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "nccl.h"
#include "soak/comms.h"
#include "soak/runner.h"
#include "soak/tally.h"
#include "support/start_gate.h"

namespace braid::soak {
namespace {

/// How long past --seconds the ranks may take to make their communicators, finish the last
/// step and report, before the launcher takes them for hung: well past the deadline braid-soak
/// gives every blocking wait (BRAID_TIMEOUT_MS, main.cc).
constexpr int kGraceSeconds = 300;

void printHeader(const Options& o, int nranks) {
  std::string names;
  for (const Flavour& f : flavoursFor(o.memory)) names += (names.empty() ? "" : ", ") + f.name;
  printf(
      "braid-soak: seed %llu, %d ranks, %s memory, %g s, calls up to %zu B, groups up to %d\n"
      "braid-soak: communicators: %s\n",
      static_cast<unsigned long long>(o.seed), nranks, memoryName(o.memory), o.seconds, o.maxBytes,
      o.maxGroup, names.c_str());
  fflush(stdout);
}

int report(const std::vector<Tally>& tallies, const Tally& total, int nranks) {
  for (size_t r = 0; r < tallies.size(); ++r) {
    printf("%s\n", tallies[r].summary("rank " + std::to_string(r)).c_str());
    for (const std::string& n : tallies[r].notes) printf("  %s\n", n.c_str());
  }
  printf("%s\n", total.summary("total", nranks).c_str());
  printf("calls by collective (all ranks): %s\n", total.byCollective().c_str());
  const bool clean = total.wrong == 0 && total.errors == 0;
  printf("braid-soak: %s\n", clean ? "PASS" : "FAIL");
  return clean ? 0 : 1;
}

/// Reads every child's pipe to its end, or until the deadline; true when all ended in time.
bool collect(std::vector<int>& fds, std::vector<std::string>* texts,
             std::chrono::steady_clock::time_point deadline, bool bounded) {
  size_t open = fds.size();
  while (open > 0) {
    std::vector<pollfd> polls;
    std::vector<size_t> which;
    for (size_t r = 0; r < fds.size(); ++r) {
      if (fds[r] < 0) continue;
      polls.push_back({fds[r], POLLIN, 0});
      which.push_back(r);
    }
    if (bounded && std::chrono::steady_clock::now() > deadline) return false;
    if (poll(polls.data(), polls.size(), 1000) < 0) continue;
    for (size_t i = 0; i < polls.size(); ++i) {
      if (polls[i].revents == 0) continue;
      char buf[4096];
      const ssize_t n = read(polls[i].fd, buf, sizeof buf);
      if (n > 0) {
        (*texts)[which[i]].append(buf, static_cast<size_t>(n));
        continue;
      }
      close(fds[which[i]]);
      fds[which[i]] = -1;
      --open;
    }
  }
  return true;
}

}  // namespace

int runForked(const Options& o) {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) {
    fprintf(stderr, "braid-soak: ncclGetUniqueId failed: %s\n", ncclGetLastError(nullptr));
    return 1;
  }
  printHeader(o, o.procs);
  std::vector<pid_t> pids;
  std::vector<int> fds;
  testing::StartGate gate;  // no fork while the id's root thread works (start_gate.h)
  if (!gate.ok()) {
    perror("braid-soak: pipe");
    return 1;
  }
  for (int rank = 0; rank < o.procs; ++rank) {
    int p[2];
    if (pipe(p) != 0) {
      perror("braid-soak: pipe");
      return 1;
    }
    fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
      perror("braid-soak: fork");
      return 1;
    }
    if (pid == 0) {
      gate.pass();
      close(p[0]);
      for (int fd : fds) close(fd);
      Tally tally;
      runRank(o, id, rank, o.procs, &tally, nullptr);
      const std::string text = tally.serialize();
      for (size_t at = 0; at < text.size();) {
        const ssize_t n = write(p[1], text.data() + at, text.size() - at);
        if (n <= 0) break;
        at += static_cast<size_t>(n);
      }
      close(p[1]);
      fflush(nullptr);
      _exit(tally.wrong == 0 && tally.errors == 0 ? 0 : 1);
    }
    close(p[1]);
    pids.push_back(pid);
    fds.push_back(p[0]);
  }
  gate.open();
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::seconds(static_cast<int64_t>(o.seconds) + kGraceSeconds);
  std::vector<std::string> texts(o.procs);
  const bool inTime = collect(fds, &texts, deadline, o.steps == 0);
  std::vector<Tally> tallies(o.procs);
  Tally total;
  for (int rank = 0; rank < o.procs; ++rank) {
    if (!inTime) kill(pids[rank], SIGKILL);
    int status = 0;
    waitpid(pids[rank], &status, 0);
    Tally& t = tallies[rank];
    if (!t.parse(texts[rank])) {
      ++t.errors;
      t.notes.push_back(!inTime ? "hung: killed at the deadline"
                        : WIFSIGNALED(status)
                            ? "died with signal " + std::to_string(WTERMSIG(status))
                            : "ended without a report (exit " +
                                  std::to_string(WEXITSTATUS(status)) + ")");
    }
    total.add(t);
  }
  for (int fd : fds) {
    if (fd >= 0) close(fd);
  }
  return report(tallies, total, o.procs);
}

int runJoined(const Options& o, int rank, int nranks) {
  // With BRAID_COMM_ID set by the launcher's environment, every rank gets the same id.
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) {
    fprintf(stderr, "braid-soak: rank %d: ncclGetUniqueId failed: %s\n", rank,
            ncclGetLastError(nullptr));
    return 1;
  }
  if (rank == 0) printHeader(o, nranks);
  Tally tally, total;
  runRank(o, id, rank, nranks, &tally, &total);
  printf("%s\n", tally.summary("rank " + std::to_string(rank)).c_str());
  for (const std::string& n : tally.notes) printf("  %s\n", n.c_str());
  fflush(stdout);
  if (rank != 0) return tally.wrong == 0 && tally.errors == 0 ? 0 : 1;
  // Rank 0's total is what the ranks summed, when the run ended cleanly enough to sum.
  if (tally.errors != 0) total = tally;
  return report({}, total, nranks);
}

}  // namespace braid::soak
