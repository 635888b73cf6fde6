// What the fuzz targets (tests/fuzz) hold every input to beyond "no crash":
// properties whose failure is a bug even though nothing crashed. A failed
// check prints what broke and aborts, so that libFuzzer keeps the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "braid/status.h"
#include "topology/braid_xml.h"
#include "topology/graph.h"
#include "topology/topology_file.h"

namespace braid::fuzz {

[[noreturn]] inline void fail(const std::string& what) {
  fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
  abort();
}

inline void check(bool holds, const std::string& what) {
  if (!holds) fail(what);
}

/// A refused topology is a kInvalidArgument whose message names the source:
/// it starts with `source` (the parsers' "<source>:<line>: what is wrong"),
/// or, where `anywhere`, holds it ("cannot open topology file <path>: ...").
inline void checkRefusal(const Status& status, const std::string& source, bool anywhere = false) {
  check(status.code() == ErrorCode::kInvalidArgument,
        "a refusal that is not kInvalidArgument: " + status.message());
  const size_t at = status.message().find(source);
  check(anywhere ? at != std::string::npos : at == 0,
        "a refusal that does not name " + source + ": " + status.message());
}

/// A graph braid read must survive its own writer: the text read back gives
/// the same text again (the round trip topology_file_test checks on fixtures).
inline void checkRoundTrip(const topology::Graph& graph) {
  const std::string written = topology::writeBraidXml(graph);
  Result<topology::Graph> again = topology::parseTopology(written, "written.xml");
  if (!again.ok()) {
    fail("braid cannot read what it wrote: " + again.status().message() + "\n" + written);
  }
  const std::string rewritten = topology::writeBraidXml(again.value());
  if (rewritten != written) {
    fail("the round trip changed the file:\n" + written + "\n--\n" + rewritten);
  }
}

}  // namespace braid::fuzz
