#include "base/log.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "base/env.h"

namespace braid::log {

thread_local int tlsRank = -1;

namespace {

Level parseLevel() {
  auto value = env::get("DEBUG");
  if (!value) return Level::kWarn;
  std::string v = *value;
  for (auto& c : v) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  if (v == "VERSION" || v == "NONE") return Level::kNone;
  if (v == "WARN") return Level::kWarn;
  if (v == "INFO") return Level::kInfo;
  if (v == "TRACE" || v == "ABORT") return Level::kTrace;
  fprintf(stderr, "braid WARN unknown BRAID_DEBUG value '%s', using WARN\n", value->c_str());
  return Level::kWarn;
}

const char* levelName(Level l) {
  switch (l) {
    case Level::kWarn:
      return "WARN";
    case Level::kInfo:
      return "INFO";
    case Level::kTrace:
      return "TRACE";
    default:
      return "";
  }
}

const char* hostName() {
  static const std::string name = [] {
    char buf[256] = {};
    gethostname(buf, sizeof(buf) - 1);
    char* dot = strchr(buf, '.');
    if (dot) *dot = '\0';
    return std::string(buf);
  }();
  return name.c_str();
}

}  // namespace

namespace {
// The level BRAID_DEBUG / NCCL_DEBUG set, read on first use; -1 until then.
std::atomic<int> cachedLevel{-1};
}  // namespace

Level level() {
  int l = cachedLevel.load(std::memory_order_relaxed);
  if (l < 0) {
    l = static_cast<int>(parseLevel());
    cachedLevel.store(l, std::memory_order_relaxed);
  }
  return static_cast<Level>(l);
}

void resetLevel() { cachedLevel.store(-1, std::memory_order_relaxed); }

void write(Level l, const char* fmt, ...) {
  if (!enabled(l)) return;
  char body[2048];
  va_list args;
  va_start(args, fmt);
  vsnprintf(body, sizeof(body), fmt, args);
  va_end(args);
  char prefix[320];
  long tid = syscall(SYS_gettid);
  if (tlsRank >= 0) {
    snprintf(prefix, sizeof(prefix), "%s:%d:%ld [%d] braid %s ", hostName(), getpid(), tid, tlsRank,
             levelName(l));
  } else {
    snprintf(prefix, sizeof(prefix), "%s:%d:%ld braid %s ", hostName(), getpid(), tid,
             levelName(l));
  }
  // One fprintf per line so lines of concurrent ranks do not interleave.
  fprintf(stderr, "%s%s\n", prefix, body);
}

}  // namespace braid::log
