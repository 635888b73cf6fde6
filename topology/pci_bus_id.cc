#include "topology/pci_bus_id.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

namespace braid::topology {
namespace {

/// Parses hex digits [begin, end) of `text` into `value`; false if empty,
/// not hex, or more than `maxDigits` long.
bool parseHex(const std::string& text, size_t begin, size_t end, size_t maxDigits,
              unsigned* value) {
  if (end <= begin || end - begin > maxDigits) return false;
  unsigned v = 0;
  for (size_t i = begin; i < end; ++i) {
    char c = text[i];
    unsigned digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<unsigned>(c - 'A' + 10);
    } else {
      return false;
    }
    v = v * 16 + digit;
  }
  *value = v;
  return true;
}

}  // namespace

std::string formatPciBusId(unsigned domain, unsigned bus, unsigned device, unsigned function) {
  char text[32];
  snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", domain, bus, device, function);
  return text;
}

Result<std::string> normalizePciBusId(const std::string& text) {
  // Parse from the right: ".f", then ":dd", then ":bb", then an optional domain.
  auto bad = [&] { return invalidArgument("'" + text + "' is not a PCI bus id"); };
  size_t dot = text.rfind('.');
  if (dot == std::string::npos) return bad();
  size_t lastColon = text.rfind(':', dot);
  if (lastColon == std::string::npos) return bad();
  size_t busColon = lastColon == 0 ? std::string::npos : text.rfind(':', lastColon - 1);
  size_t busBegin = busColon == std::string::npos ? 0 : busColon + 1;
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (!parseHex(text, dot + 1, text.size(), 1, &function) || function > 7) return bad();
  if (!parseHex(text, lastColon + 1, dot, 2, &device) || device > 31) return bad();
  if (!parseHex(text, busBegin, lastColon, 2, &bus)) return bad();
  if (busColon != std::string::npos && !parseHex(text, 0, busColon, 8, &domain)) return bad();
  return formatPciBusId(domain, bus, device, function);
}

std::string pciBusIdInSysfsPath(const std::string& resolvedPath) {
  std::string deepest;
  size_t begin = 0;
  while (begin <= resolvedPath.size()) {
    size_t end = resolvedPath.find('/', begin);
    if (end == std::string::npos) end = resolvedPath.size();
    std::string part = resolvedPath.substr(begin, end - begin);
    // A PCI device directory is exactly "dddd:bb:dd.f"; "pci0000:00" is a root bus.
    if (part.size() == 12) {
      auto id = normalizePciBusId(part);
      if (id.ok() && id.value() == part) deepest = part;
    }
    begin = end + 1;
  }
  return deepest;
}

int pciNumaNode(const std::string& sysRoot, const std::string& busId) {
  std::ifstream file(sysRoot + "/bus/pci/devices/" + busId + "/numa_node");
  int node = -1;
  if (!(file >> node)) return -1;
  return node < 0 ? -1 : node;
}

std::string resolvedPath(const std::string& path) {
  std::unique_ptr<char, decltype(&free)> resolved(realpath(path.c_str(), nullptr), &free);
  return resolved ? std::string(resolved.get()) : std::string();
}

}  // namespace braid::topology
