#include "topology/net_devices.h"

#include <cctype>

namespace braid::topology {
namespace {

// "dddd:bb:dd.f", hexadecimal digits where the shape has letters.
bool looksLikeBusId(const std::string& text) {
  static const std::string kShape = "xxxx:xx:xx.x";
  if (text.size() != kShape.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool digit = std::isxdigit(static_cast<unsigned char>(text[i])) != 0;
    if (kShape[i] == 'x' ? !digit : text[i] != kShape[i]) return false;
  }
  return true;
}

}  // namespace

std::string busIdOfPciPath(const std::string& path) {
  std::string last = path;
  while (!last.empty() && last.back() == '/') last.pop_back();
  const size_t slash = last.rfind('/');
  if (slash != std::string::npos) last = last.substr(slash + 1);
  if (!looksLikeBusId(last)) return "";
  for (char& c : last) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return last;
}

int nearestNetDevice(const Graph& graph, const Paths& paths, int from,
                     const std::vector<std::string>& busIds, int spread, PathType* type) {
  const int host = graph.node(from).host;
  std::vector<int> nearest;  // device indices
  const Path* best = nullptr;
  for (size_t d = 0; d < busIds.size(); ++d) {
    if (busIds[d].empty()) continue;
    const int node = graph.findByBusId(host, busIds[d]);
    if (node < 0) continue;
    const Path& path = paths.between(from, node);
    if (path.type == PathType::kDis) continue;
    if (best == nullptr || betterPath(path, *best)) {
      best = &path;
      nearest.assign(1, static_cast<int>(d));
    } else if (!betterPath(*best, path)) {
      nearest.push_back(static_cast<int>(d));
    }
  }
  if (nearest.empty()) return -1;
  if (type != nullptr) *type = best->type;
  const int count = static_cast<int>(nearest.size());
  return nearest[((spread % count) + count) % count];
}

}  // namespace braid::topology
