// CUDA_VISIBLE_DEVICES (visible_devices.h).
#include "gpu/visible_devices.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace braid::gpu {
namespace {

std::string trimmed(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

// The device `entry` names, or -1: an index below `count`, or a UUID or a prefix of exactly one.
int deviceNamed(const std::string& entry, const std::vector<std::string>& uuids) {
  const int count = static_cast<int>(uuids.size());
  if (!entry.empty() && std::all_of(entry.begin(), entry.end(), ::isdigit)) {
    const long index = std::strtol(entry.c_str(), nullptr, 10);
    return entry.size() <= 9 && index < count ? static_cast<int>(index) : -1;
  }
  if (entry.rfind("GPU-", 0) != 0) return -1;
  int found = -1;
  for (int d = 0; d < count; ++d) {
    if (uuids[d].rfind(entry, 0) != 0) continue;
    if (found >= 0) return -1;  // a prefix of two devices names neither
    found = d;
  }
  return found;
}

}  // namespace

std::vector<int> visibleDevices(const std::optional<std::string>& spec,
                                const std::vector<std::string>& uuids) {
  std::vector<int> visible;
  if (!spec) {
    for (int d = 0; d < static_cast<int>(uuids.size()); ++d) visible.push_back(d);
    return visible;
  }
  size_t at = 0;
  while (at <= spec->size() && !spec->empty()) {
    const size_t comma = std::min(spec->find(',', at), spec->size());
    const int device = deviceNamed(trimmed(spec->substr(at, comma - at)), uuids);
    if (device < 0 || std::find(visible.begin(), visible.end(), device) != visible.end()) break;
    visible.push_back(device);
    at = comma + 1;
  }
  return visible;
}

std::optional<std::vector<std::pair<int, int>>> parseDevicePairs(const std::string& text) {
  std::vector<std::pair<int, int>> pairs;
  size_t at = 0;
  while (at < text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = trimmed(text.substr(at, comma - at));
    const size_t arrow = item.find('>');
    if (arrow == std::string::npos || arrow == 0 || arrow + 1 == item.size()) return std::nullopt;
    const std::string from = item.substr(0, arrow), to = item.substr(arrow + 1);
    if (!std::all_of(from.begin(), from.end(), ::isdigit) ||
        !std::all_of(to.begin(), to.end(), ::isdigit) || from.size() > 4 || to.size() > 4) {
      return std::nullopt;
    }
    pairs.emplace_back(std::stoi(from), std::stoi(to));
    at = comma + 1;
  }
  return pairs;
}

std::string emulatedUuid(int physical) {
  char text[48];
  // The device in the first group, so that a short prefix names it, as real UUIDs differ there.
  snprintf(text, sizeof(text), "GPU-%08x-0000-4000-8000-e0e0e0e0e0e0", 0xe0e00000u + physical);
  return text;
}

}  // namespace braid::gpu
