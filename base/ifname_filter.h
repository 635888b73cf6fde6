// BRAID_SOCKET_IFNAME (NCCL_SOCKET_IFNAME): which network interfaces the
// bootstrap and the socket transport may use, in NCCL's syntax:
//
//   "eth,ib"    interfaces whose names start with eth or ib
//   "=eth0"     exactly eth0 (not eth01)
//   "^docker"   every interface but those starting with docker
//   "^=lo"      every interface but lo
//
// Empty items ("eth,,ib") are skipped; an empty list matches nothing, or
// everything after "^".
#pragma once

#include <string>
#include <vector>

namespace braid::sockets {

class InterfaceFilter {
 public:
  explicit InterfaceFilter(std::string spec);
  /// Whether the list names interfaces to leave out ("^").
  bool exclude() const { return exclude_; }
  /// Whether interface `ifname` may be used.
  bool matches(const char* ifname) const;

 private:
  bool exclude_ = false;
  bool exact_ = false;
  std::vector<std::string> names_;
};

}  // namespace braid::sockets
