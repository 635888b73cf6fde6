// SIGUSR1 to the flight recorders' dumps (see dump_on_signal.h).
#include "flight/dump_on_signal.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "base/log.h"

namespace braid::flight {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<const FlightRecorder*, std::function<std::vector<std::string>()>> recorders;
  std::once_flag installed;
};

Registry& registry() {
  static Registry* r = new Registry();  // the dump thread uses it until the process ends
  return *r;
}

int wakeFds[2] = {-1, -1};
struct sigaction previous {};

void onSignal(int signo, siginfo_t* info, void* context) {
  const int saved = errno;
  const char byte = 1;
  (void)!write(wakeFds[1], &byte, 1);  // a full pipe already holds a request
  errno = saved;
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(signo, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN &&
             previous.sa_handler != nullptr) {
    previous.sa_handler(signo);
  }
}

void dumpAll() {
  char drain[64];
  while (true) {
    const ssize_t n = read(wakeFds[0], drain, sizeof(drain));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the pipe is gone
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (const auto& [recorder, lost] : r.recorders) {
      Result<std::string> path = recorder->dump("SIGUSR1", lost());
      if (path.ok()) {
        BRAID_WARN("flight recorder: rank %d dumped to %s", recorder->identity().rank,
                   path.value().c_str());
      } else {
        BRAID_WARN("flight recorder: %s", path.status().message().c_str());
      }
    }
  }
}

void install() {
  if (pipe2(wakeFds, O_CLOEXEC) != 0) {
    BRAID_WARN("flight recorder: no pipe for SIGUSR1 (%s): dumps only on errors", strerror(errno));
    return;
  }
  (void)fcntl(wakeFds[1], F_SETFL, O_NONBLOCK);
  std::thread(dumpAll).detach();
  struct sigaction action {};
  action.sa_sigaction = onSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGUSR1, &action, &previous);
}

}  // namespace

void dumpOnSignal(const FlightRecorder* recorder, std::function<std::vector<std::string>()> lost) {
  Registry& r = registry();
  std::call_once(r.installed, install);
  std::lock_guard<std::mutex> lock(r.mutex);
  r.recorders[recorder] = std::move(lost);
}

void forget(const FlightRecorder* recorder) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.recorders.erase(recorder);
}

}  // namespace braid::flight
