#include "base/host_port.h"

#include <algorithm>

namespace braid::sockets {

namespace {

Result<uint16_t> parsePort(const std::string& text, const std::string& whole) {
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return invalidArgument("bad port in '" + whole + "': expected host:port");
  }
  int port = std::stoi(text);
  if (port < 1 || port > 65535) return invalidArgument("port out of range in '" + whole + "'");
  return static_cast<uint16_t>(port);
}

}  // namespace

Result<HostPort> splitHostPort(const std::string& hostPort) {
  HostPort out;
  std::string port;
  if (!hostPort.empty() && hostPort[0] == '[') {
    size_t close = hostPort.find(']');
    if (close == std::string::npos || close + 1 >= hostPort.size() || hostPort[close + 1] != ':') {
      return invalidArgument("bad address '" + hostPort + "': expected [ipv6]:port");
    }
    out.host = hostPort.substr(1, close - 1);
    port = hostPort.substr(close + 2);
  } else {
    size_t colon = hostPort.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      return invalidArgument("bad address '" + hostPort + "': expected host:port");
    }
    out.host = hostPort.substr(0, colon);
    port = hostPort.substr(colon + 1);
  }
  BRAID_ASSIGN_OR_RETURN(out.port, parsePort(port, hostPort));
  return out;
}

}  // namespace braid::sockets
