// libFuzzer target: the small parsers behind braid's environment variables,
// one at a time, on raw text. The input's first line names the parser, the
// rest is its text:
//
//   size        env::parseSize (every numeric BRAID_* variable: "4M", "0x10")
//   algo        tune::parseAllowed: BRAID_ALGO on the second line, BRAID_PROTO on the third
//   p2p         topology::parsePathType (BRAID_P2P_LEVEL)
//   transports  topology::TransportSet::parse (BRAID_TRANSPORTS)
//   hca         transport::ib::HcaFilter (BRAID_IB_HCA); later lines "name:port" to test
//   ifname      sockets::InterfaceFilter (BRAID_SOCKET_IFNAME); later lines interface names
//   hostport    sockets::splitHostPort (BRAID_COMM_ID), without resolving the host
//
// Beyond "no crash", what each promises (fuzz_check.h): a size is what its
// digits and suffix say, a refusal is an argument or usage error, a filter of names
// with "^" in front allows exactly what the same filter without it refuses.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/host_port.h"
#include "base/ifname_filter.h"
#include "fuzz/fuzz_check.h"
#include "topology/graph.h"
#include "topology/transport_choice.h"
#include "transport/net/ib/hca_filter.h"
#include "tune/select.h"

namespace {

using braid::fuzz::check;

std::vector<std::string> lines(std::string_view text) {
  std::vector<std::string> out;
  while (true) {
    const size_t end = text.find('\n');
    out.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) return out;
    text.remove_prefix(end + 1);
  }
}

// kInvalidArgument for what is no value at all, kInvalidUsage for NCCL's names of what braid
// does not have ("NVLS", "LL128").
void checkRefusal(const braid::Status& status) {
  check(status.ok() || status.code() == braid::ErrorCode::kInvalidArgument ||
            status.code() == braid::ErrorCode::kInvalidUsage,
        "a refusal that is neither kInvalidArgument nor kInvalidUsage: " + status.message());
}

void fuzzSize(const std::string& text) {
  const std::optional<int64_t> size = braid::env::parseSize(text);
  if (!size) return;
  // The digits alone, with no suffix, give the number itself (or no number).
  const std::string digits = text.substr(0, text.find_first_not_of("0123456789"));
  if (!digits.empty() && digits.size() == text.size() && digits[0] != '0') {
    check(std::to_string(*size) == digits, "'" + text + "' read as " + std::to_string(*size));
  }
}

void fuzzHca(const std::vector<std::string>& in) {
  // A spec that already excludes cannot be flipped by a second '^'.
  if (!in[1].empty() && in[1][0] == '^') return;
  const braid::transport::ib::HcaFilter allow(in[1]);
  const braid::transport::ib::HcaFilter deny("^" + in[1]);
  bool empty = true;
  for (char c : in[1]) empty = empty && (c == ',' || c == '=');
  for (size_t i = 2; i < in.size(); ++i) {
    const size_t colon = in[i].rfind(':');
    const std::string name = in[i].substr(0, colon);
    const int port = colon == std::string::npos ? 1 : atoi(in[i].c_str() + colon + 1);
    // An empty list allows everything either way; otherwise "^" flips every answer.
    if (!empty) {
      check(allow.allows(name, port) != deny.allows(name, port), "'^' did not flip " + in[i]);
    }
  }
}

void fuzzIfname(const std::vector<std::string>& in) {
  if (!in[1].empty() && in[1][0] == '^') return;
  const braid::sockets::InterfaceFilter allow(in[1]);
  const braid::sockets::InterfaceFilter deny("^" + in[1]);
  for (size_t i = 2; i < in.size(); ++i) {
    check(allow.matches(in[i].c_str()) != deny.matches(in[i].c_str()), "'^' did not flip " + in[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> in = lines(std::string_view(reinterpret_cast<const char*>(data), size));
  if (in.size() < 2) return 0;
  const std::string& parser = in[0];
  if (parser == "size") {
    fuzzSize(in[1]);
  } else if (parser == "algo") {
    auto allowed = braid::tune::parseAllowed(in[1], in.size() > 2 ? in[2] : "");
    checkRefusal(allowed.status());
    if (allowed.ok()) (void)braid::tune::describeAllowed(allowed.value());
  } else if (parser == "p2p") {
    checkRefusal(braid::topology::parsePathType(in[1]).status());
  } else if (parser == "transports") {
    auto transports = braid::topology::TransportSet::parse(in[1]);
    checkRefusal(transports.status());
    if (transports.ok()) (void)transports.value().describe();
  } else if (parser == "hca") {
    fuzzHca(in);
  } else if (parser == "ifname") {
    fuzzIfname(in);
  } else if (parser == "hostport") {
    auto split = braid::sockets::splitHostPort(in[1]);
    checkRefusal(split.status());
    if (split.ok()) check(split.value().port >= 1, "port 0 accepted from " + in[1]);
  }
  return 0;
}
