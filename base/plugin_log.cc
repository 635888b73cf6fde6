#include "base/plugin_log.h"

#include <cstdio>

#include "base/log.h"

namespace braid::plugins {

void writePluginLog(const char* kind, ncclDebugLogLevel level, const char* fmt, va_list args) {
  const log::Level ours = level == NCCL_LOG_WARN || level == NCCL_LOG_ABORT ? log::Level::kWarn
                          : level == NCCL_LOG_TRACE                         ? log::Level::kTrace
                                                                            : log::Level::kInfo;
  if (level == NCCL_LOG_NONE || !log::enabled(ours)) return;
  char text[1024];
  vsnprintf(text, sizeof(text), fmt, args);
  log::write(ours, "%s/Plugin: %s", kind, text);
}

}  // namespace braid::plugins
