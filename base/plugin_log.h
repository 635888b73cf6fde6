// The logger NCCL gives its plugins (network, tuner, profiler): ncclDebugLogLevel and the
// function type plugins call, as NCCL's headers lay them out, and braid's log behind it.
#pragma once

#include <cstdarg>

namespace braid::plugins {

/// ncclDebugLogLevel: the level of a plugin's log line.
enum ncclDebugLogLevel {
  NCCL_LOG_NONE = 0,
  NCCL_LOG_VERSION = 1,
  NCCL_LOG_WARN = 2,
  NCCL_LOG_INFO = 3,
  NCCL_LOG_ABORT = 4,
  NCCL_LOG_TRACE = 5
};

/// ncclDebugLogger_t: what a plugin calls to log (its subsystem flags, file and line unused).
typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char* file,
                                  int line, const char* fmt, ...);

/// Writes a plugin's line to braid's log at the level it asked, marked "KIND/Plugin: " ("NET",
/// "PROFILER"); nothing where that level is off.
void writePluginLog(const char* kind, ncclDebugLogLevel level, const char* fmt, va_list args);

}  // namespace braid::plugins
