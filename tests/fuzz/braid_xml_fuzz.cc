// libFuzzer target: braid's own topology format (BRAID_TOPO_FILE,
// BRAID_TOPO_DUMP_FILE), through the parser and reader braid loads it with
// (XmlDocument::parse, graphFromBraidXml). Every input gives a graph or a
// refusal naming the source; a graph survives braid's writer (fuzz_check.h).
#include <cstdint>
#include <memory>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "topology/braid_xml.h"
#include "topology/xml_document.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto document = braid::topology::XmlDocument::parse(text, "braid.xml");
  if (!document.ok()) {
    braid::fuzz::checkRefusal(document.status(), "braid.xml:");
    return 0;
  }
  braid::Result<braid::topology::Graph> graph =
      braid::topology::graphFromBraidXml(*document.value());
  if (!graph.ok()) {
    braid::fuzz::checkRefusal(graph.status(), "braid.xml:");
    return 0;
  }
  braid::fuzz::checkRoundTrip(graph.value());
  return 0;
}
