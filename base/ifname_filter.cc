#include "base/ifname_filter.h"

#include <cstring>

namespace braid::sockets {

InterfaceFilter::InterfaceFilter(std::string spec) {
  if (!spec.empty() && spec[0] == '^') {
    exclude_ = true;
    spec.erase(0, 1);
  }
  if (!spec.empty() && spec[0] == '=') {
    exact_ = true;
    spec.erase(0, 1);
  }
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    if (comma > start) names_.push_back(spec.substr(start, comma - start));
    start = comma + 1;
  }
}

bool InterfaceFilter::matches(const char* ifname) const {
  bool listed = false;
  for (const auto& name : names_) {
    if (exact_ ? name == ifname : strncmp(ifname, name.c_str(), name.size()) == 0) {
      listed = true;
    }
  }
  return listed != exclude_;
}

}  // namespace braid::sockets
