// The logger NCCL hands its plugins (network, tuner, profiler): ncclDebugLogLevel and
// ncclDebugLogger_t as NCCL's nccl_common.h has them (names, values), and what braid's loggers
// do with a line, so that every plugin ABI (transport/net/plugin/net_plugin_abi.h,
// src/tune/plugin/tuner_abi.h) names the one type.
#pragma once

#include <cstdarg>

namespace braid::plugins {

/// ncclDebugLogLevel: the level of a plugin's log call.
enum ncclDebugLogLevel {
  NCCL_LOG_NONE = 0,
  NCCL_LOG_VERSION = 1,
  NCCL_LOG_WARN = 2,
  NCCL_LOG_INFO = 3,
  NCCL_LOG_ABORT = 4,
  NCCL_LOG_TRACE = 5
};

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char* file,
                                  int line, const char* fmt, ...);

/// Writes a plugin's log line to braid's log at the level it asked (WARN and ABORT as WARN,
/// TRACE as TRACE, the rest as INFO), after `tag` ("NET/Plugin"); nothing for NCCL_LOG_NONE or
/// below BRAID_DEBUG's level.
void writePluginLog(const char* tag, ncclDebugLogLevel level, const char* fmt, va_list args);

}  // namespace braid::plugins
