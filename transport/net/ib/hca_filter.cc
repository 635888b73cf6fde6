#include "transport/net/ib/hca_filter.h"

#include <cstdlib>

namespace braid::transport::ib {

HcaFilter::HcaFilter(const std::string& spec) {
  size_t start = 0;
  if (start < spec.size() && spec[start] == '^') {
    exclude_ = true;
    ++start;
  }
  if (start < spec.size() && spec[start] == '=') {
    exact_ = true;
    ++start;
  }
  while (start < spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    std::string item = spec.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) continue;
    Entry entry;
    const size_t colon = item.find(':');
    if (colon != std::string::npos) {
      entry.port = std::atoi(item.c_str() + colon + 1);
      item.resize(colon);
    }
    entry.name = item;
    entries_.push_back(entry);
  }
}

bool HcaFilter::nameMatches(const Entry& e, const std::string& name) const {
  return exact_ ? name == e.name : name.compare(0, e.name.size(), e.name) == 0;
}

bool HcaFilter::allows(const std::string& name, int port) const {
  if (entries_.empty()) return true;
  bool listed = false;
  for (const Entry& e : entries_) {
    if (nameMatches(e, name) && (e.port < 0 || e.port == port)) listed = true;
  }
  return listed != exclude_;
}

bool HcaFilter::allowsSomePort(const std::string& name) const {
  if (entries_.empty()) return true;
  for (const Entry& e : entries_) {
    if (!nameMatches(e, name)) continue;
    // Listed: some port is allowed, unless every port is excluded by an entry without one.
    if (!exclude_) return true;
    if (e.port < 0) return false;
  }
  return exclude_;
}

}  // namespace braid::transport::ib
