#include "units.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace braid::sim {
namespace {

// Splits "12.5GB/s" into 12.5 and "GB/s"; false if there is no number.
bool splitNumber(const std::string& text, double* number, std::string* unit) {
  const char* begin = text.c_str();
  char* end = nullptr;
  *number = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(*number)) return false;
  while (*end == ' ') ++end;
  *unit = end;
  return true;
}

}  // namespace

Result<uint64_t> parseBytes(const std::string& text) {
  const std::string bad = "bad size '" + text + "' (expected e.g. 4096, 8K, 1M, 4G)";
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) {
    return invalidArgument(bad);
  }
  char* end = nullptr;
  errno = 0;
  const unsigned long long number = std::strtoull(text.c_str(), &end, 10);
  if (errno == ERANGE) return invalidArgument("size '" + text + "' overflows");
  std::string suffix = end;
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  int shift = 0;
  if (suffix.empty()) {
    shift = 0;
  } else if (suffix == "K" || suffix == "k" || suffix == "Ki") {
    shift = 10;
  } else if (suffix == "M" || suffix == "Mi") {
    shift = 20;
  } else if (suffix == "G" || suffix == "Gi") {
    shift = 30;
  } else if (suffix == "T" || suffix == "Ti") {
    shift = 40;
  } else {
    return invalidArgument(bad);
  }
  if (number > (UINT64_MAX >> shift)) return invalidArgument("size '" + text + "' overflows");
  return static_cast<uint64_t>(number) << shift;
}

Result<double> parseBandwidth(const std::string& text) {
  const std::string bad =
      "bad bandwidth '" + text + "' (expected e.g. 450GB/s for bytes or 400Gb/s for bits)";
  double number = 0;
  std::string unit;
  if (!splitNumber(text, &number, &unit) || number <= 0 || unit.size() < 4 ||
      unit.compare(unit.size() - 2, 2, "/s") != 0) {
    return invalidArgument(bad);
  }
  const char bitOrByte = unit[unit.size() - 3];
  const std::string prefix = unit.substr(0, unit.size() - 3);
  double scale = 0;
  if (prefix == "T") {
    scale = 1e12;
  } else if (prefix == "G") {
    scale = 1e9;
  } else if (prefix == "M") {
    scale = 1e6;
  } else if (prefix == "K" || prefix == "k") {
    scale = 1e3;
  } else {
    return invalidArgument(bad);
  }
  if (bitOrByte == 'b') {
    scale /= 8;
  } else if (bitOrByte != 'B') {
    return invalidArgument(bad);
  }
  return number * scale / 1e6;  // bytes per second -> bytes per microsecond
}

Result<double> parseDuration(const std::string& text) {
  const std::string bad = "bad duration '" + text + "' (expected e.g. 1us, 500ns, 2ms)";
  double number = 0;
  std::string unit;
  if (!splitNumber(text, &number, &unit) || number < 0) return invalidArgument(bad);
  if (unit == "us") return number;
  if (unit == "ns") return number / 1e3;
  if (unit == "ms") return number * 1e3;
  if (unit == "s") return number * 1e6;
  return invalidArgument(bad);
}

std::string formatBytes(uint64_t bytes) {
  static const char* kSuffix[] = {"", "K", "M", "G", "T"};
  int i = 0;
  while (i < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++i;
  }
  return std::to_string(bytes) + kSuffix[i];
}

std::string formatDuration(double us) {
  char text[32];
  if (us < 1) {
    snprintf(text, sizeof(text), "%.1f ns", us * 1e3);
  } else if (us < 1e3) {
    snprintf(text, sizeof(text), "%.2f us", us);
  } else if (us < 1e6) {
    snprintf(text, sizeof(text), "%.3f ms", us / 1e3);
  } else {
    snprintf(text, sizeof(text), "%.3f s", us / 1e6);
  }
  return text;
}

std::string formatBandwidth(double bytesPerUs) {
  char text[32];
  snprintf(text, sizeof(text), "%.2f GB/s", bytesPerUs / 1e3);
  return text;
}

}  // namespace braid::sim
