// libFuzzer target: NCCL's topology format (NCCL_TOPO_FILE), through the
// parser and reader braid loads it with (XmlDocument::parse,
// graphFromNcclXml). Every input gives a graph or a refusal naming the
// source; a graph survives braid's writer (fuzz_check.h).
#include <cstdint>
#include <memory>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "topology/nccl_xml.h"
#include "topology/xml_document.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto document = braid::topology::XmlDocument::parse(text, "nccl.xml");
  if (!document.ok()) {
    braid::fuzz::checkRefusal(document.status(), "nccl.xml:");
    return 0;
  }
  braid::Result<braid::topology::Graph> graph =
      braid::topology::graphFromNcclXml(*document.value());
  if (!graph.ok()) {
    braid::fuzz::checkRefusal(graph.status(), "nccl.xml:");
    return 0;
  }
  braid::fuzz::checkRoundTrip(graph.value());
  return 0;
}
