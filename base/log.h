// Logging to stderr, filtered by BRAID_DEBUG (NCCL_DEBUG as a fallback).
//
// Every line starts with "host:pid:tid [rank] braid LEVEL", as NCCL's do, so
// logs of many ranks can be merged and grepped. The rank comes from the
// thread's current communicator (ScopedLogRank), set at each API entry.
#pragma once

#include <cstdarg>

namespace braid::log {

enum class Level : int { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

/// The level chosen by BRAID_DEBUG / NCCL_DEBUG, read once per process.
Level level();
/// Forgets the level, so that the next message reads BRAID_DEBUG again.
void resetLevel();
inline bool enabled(Level l) { return static_cast<int>(level()) >= static_cast<int>(l); }

/// printf-style; appends a newline.
void write(Level l, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/// The rank this thread's log lines print (-1: none); ScopedLogRank sets it.
extern thread_local int tlsRank;

/// Sets the rank printed by this thread's log lines while in scope. Inline, as every call of
/// the API makes one: the thread-local's address is then looked up once for both ends.
class ScopedLogRank {
 public:
  explicit ScopedLogRank(int rank) : saved_(tlsRank) { tlsRank = rank; }
  ~ScopedLogRank() { tlsRank = saved_; }
  ScopedLogRank(const ScopedLogRank&) = delete;
  ScopedLogRank& operator=(const ScopedLogRank&) = delete;

 private:
  int saved_;
};

}  // namespace braid::log

#define BRAID_WARN(...) ::braid::log::write(::braid::log::Level::kWarn, __VA_ARGS__)
#define BRAID_INFO(...)                                             \
  do {                                                              \
    if (::braid::log::enabled(::braid::log::Level::kInfo))          \
      ::braid::log::write(::braid::log::Level::kInfo, __VA_ARGS__); \
  } while (0)
#define BRAID_TRACE(...)                                             \
  do {                                                               \
    if (::braid::log::enabled(::braid::log::Level::kTrace))          \
      ::braid::log::write(::braid::log::Level::kTrace, __VA_ARGS__); \
  } while (0)
