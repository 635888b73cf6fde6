#include "base/env.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/log.h"

namespace braid::env {

std::optional<std::string> raw(const char* fullName) {
  const char* v = getenv(fullName);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::optional<std::string> get(const char* name) {
  if (auto v = raw((std::string("BRAID_") + name).c_str())) return v;
  return raw((std::string("NCCL_") + name).c_str());
}

std::optional<int64_t> parseSize(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long v = strtoll(text.c_str(), &end, 0);
  // Past int64 strtoll answers its largest value, which is not what was written.
  if (end == text.c_str() || errno == ERANGE) return std::nullopt;
  int64_t scale = 1;
  switch (*end) {
    case '\0':
      break;
    case 'k':
    case 'K':
      scale = 1LL << 10;
      ++end;
      break;
    case 'm':
    case 'M':
      scale = 1LL << 20;
      ++end;
      break;
    case 'g':
    case 'G':
      scale = 1LL << 30;
      ++end;
      break;
    default:
      return std::nullopt;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return std::nullopt;
  if (v > INT64_MAX / scale || v < INT64_MIN / scale) return std::nullopt;  // "9000000000G"
  return static_cast<int64_t>(v) * scale;
}

int64_t getInt(const char* name, int64_t fallback) {
  auto v = get(name);
  if (!v) return fallback;
  auto parsed = parseSize(*v);
  if (!parsed) {
    BRAID_WARN("ignoring BRAID_%s='%s': not a number", name, v->c_str());
    return fallback;
  }
  return *parsed;
}

}  // namespace braid::env
