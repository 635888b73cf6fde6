// What a kill trial (tests/support/kill_trials.h) prints when its survivors are slow to return,
// so that a slow trial in CI explains itself. The watch hears of a death when the dead rank's
// sockets close; the questions are then whether they closed (the victim's process may still be
// ending: the kernel closes a killed process's descriptors only after tearing down its memory),
// whether another process holds a copy of one (a descriptor inherited across fork), and what each
// survivor's threads are doing. All of it is read from /proc. And copies of a victim's sockets
// (pidfd_getfd), for the trials that make them outlive it (KillTrialSetup::keepVictimSocketsOpen).
#pragma once

#include <dirent.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace braid::testing {

/// The sockets `pid` has open, as /proc/PID/fd names them ("socket:[N]").
inline std::set<std::string> socketsOf(pid_t pid) {
  std::set<std::string> sockets;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return sockets;
  while (const dirent* e = readdir(d)) {
    char target[256];
    const ssize_t n = readlink((dir + "/" + e->d_name).c_str(), target, sizeof(target) - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    if (strncmp(target, "socket:[", 8) == 0) sockets.insert(target);
  }
  closedir(d);
  return sockets;
}

/// Copies, in this process, of every socket `pid` has open (pidfd_getfd): they outlive its
/// death, as its own do while the kernel tears it down. Empty where the kernel does not allow
/// it.
inline std::vector<int> copySocketsOf(pid_t pid) {
  std::vector<int> copies;
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return copies;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  while (d != nullptr) {
    const dirent* e = readdir(d);
    if (e == nullptr) break;
    char target[256];
    const ssize_t n = readlink((dir + "/" + e->d_name).c_str(), target, sizeof(target) - 1);
    if (n <= 0 || strncmp(target, "socket:[", 8) != 0) continue;
    const int copy = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, atoi(e->d_name), 0));
    if (copy >= 0) copies.push_back(copy);
  }
  if (d != nullptr) closedir(d);
  close(pidfd);
  return copies;
}

/// Whether copySocketsOf works here: tried on a socket pair of this process's own.
inline bool canCopySockets() {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return false;
  const std::vector<int> copies = copySocketsOf(getpid());
  for (int fd : copies) close(fd);
  close(pair[0]);
  close(pair[1]);
  return !copies.empty();
}

/// The first line of a small /proc file, without its newline ("" when unreadable).
inline std::string firstLineOf(const std::string& path) {
  char line[512] = "";
  if (FILE* f = fopen(path.c_str(), "r")) {
    if (fgets(line, sizeof(line), f) == nullptr) line[0] = '\0';
    fclose(f);
  }
  line[strcspn(line, "\n")] = '\0';
  return line;
}

/// Every process but `except` that holds one of `sockets`: "pid (name) holds socket:[N]".
inline std::vector<std::string> holdersOf(const std::set<std::string>& sockets, pid_t except) {
  std::vector<std::string> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* p = readdir(proc)) {
    const int pid = atoi(p->d_name);
    if (pid <= 0 || pid == except) continue;
    for (const std::string& socket : socketsOf(pid)) {
      if (sockets.count(socket) == 0) continue;
      found.push_back(std::to_string(pid) + " (" +
                      firstLineOf("/proc/" + std::to_string(pid) + "/comm") + ") holds " + socket);
    }
  }
  closedir(proc);
  return found;
}

/// One line per thread of `pid`: "tid (name) STATE wait-channel"; a line saying so when the
/// process is gone.
inline std::string threadsOf(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return "    (gone)\n";
  std::string text;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string task = dir + "/" + e->d_name;
    // stat reads "tid (name) STATE ...": the name may hold spaces, the state follows its ')'.
    const std::string stat = firstLineOf(task + "/stat");
    const size_t close = stat.rfind(')');
    const std::string who = close == std::string::npos ? stat : stat.substr(0, close + 1);
    const std::string state = close == std::string::npos ? "?" : stat.substr(close + 2, 1);
    text += "    " + who + " " + state + " " + firstLineOf(task + "/wchan") + "\n";
  }
  closedir(d);
  return text;
}

/// What a trial whose survivors still run `ms` after the kill prints: whether the victim's
/// process has ended, who else holds its sockets, and every running survivor's threads.
inline std::string describeSlowKill(int trial, int ms, int victim, pid_t victimPid,
                                    bool victimReaped, const std::set<std::string>& victimSockets,
                                    const std::vector<std::pair<int, pid_t>>& running) {
  std::string text = "[ kill trial " + std::to_string(trial) + " ] survivors still run " +
                     std::to_string(ms) + " ms after the kill; rank " + std::to_string(victim) +
                     " (pid " + std::to_string(victimPid) + ") " +
                     (victimReaped ? "has ended" : "has not ended yet; its threads:") + "\n";
  if (!victimReaped) text += threadsOf(victimPid);
  const std::vector<std::string> holders = holdersOf(victimSockets, victimPid);
  text += "  other holders of its " + std::to_string(victimSockets.size()) +
          " sockets: " + (holders.empty() ? "none" : "") + "\n";
  for (const std::string& h : holders) text += "    " + h + "\n";
  for (const auto& [rank, pid] : running) {
    text += "  rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ") threads:\n";
    text += threadsOf(pid);
  }
  return text;
}

}  // namespace braid::testing
