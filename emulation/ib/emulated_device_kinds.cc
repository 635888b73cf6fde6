// What each emulated device presents: see emulated_device_kinds.h.
#include "emulation/ib/emulated_device_kinds.h"

#include <mutex>
#include <utility>

namespace braid::transport::ib::emulated {
namespace {

constexpr DeviceKind kAllKinds[] = {DeviceKind::kRoce, DeviceKind::kEfa, DeviceKind::kRoceV1Only,
                                    DeviceKind::kNoGid, DeviceKind::kPortDown};

/// The process's kinds: set from Config's thread, read by every verbs call that reports.
struct Kinds {
  std::mutex mu;
  std::vector<DeviceKind> list;
};

Kinds& kinds() {
  static Kinds k;
  return k;
}

}  // namespace

const char* kindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kRoce:
      return "roce";
    case DeviceKind::kEfa:
      return "efa";
    case DeviceKind::kRoceV1Only:
      return "roce_v1";
    case DeviceKind::kNoGid:
      return "no_gid";
    case DeviceKind::kPortDown:
      return "down";
  }
  return "?";
}

Result<std::vector<DeviceKind>> parseDeviceKinds(const std::string& text) {
  std::vector<DeviceKind> parsed;
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string word = text.substr(start, comma - start);
    bool known = false;
    for (DeviceKind kind : kAllKinds) {
      if (word == kindName(kind)) {
        parsed.push_back(kind);
        known = true;
      }
    }
    if (!known) {
      std::string names;
      for (DeviceKind kind : kAllKinds)
        names += std::string(names.empty() ? "" : ", ") + kindName(kind);
      return invalidArgument("BRAID_IB_EMULATE_KINDS=" + text + ": '" + word +
                             "' is not a kind of emulated device (" + names + ")");
    }
    start = comma + 1;
  }
  return parsed;
}

std::vector<GidEntry> gidTableOf(DeviceKind kind, int deviceIndex) {
  switch (kind) {
    case DeviceKind::kNoGid:
      return {};
    case DeviceKind::kEfa:
    case DeviceKind::kRoceV1Only:
      // The table's first entry is the device's link-local RoCE v1 GID.
      return {buildGidTable(deviceIndex).front()};
    case DeviceKind::kRoce:
    case DeviceKind::kPortDown:
      break;
  }
  return buildGidTable(deviceIndex);
}

void setDeviceKinds(std::vector<DeviceKind> list) {
  std::lock_guard<std::mutex> lock(kinds().mu);
  kinds().list = std::move(list);
}

DeviceKind deviceKind(int index) {
  std::lock_guard<std::mutex> lock(kinds().mu);
  const std::vector<DeviceKind>& list = kinds().list;
  return index >= 0 && static_cast<size_t>(index) < list.size() ? list[index] : DeviceKind::kRoce;
}

}  // namespace braid::transport::ib::emulated
